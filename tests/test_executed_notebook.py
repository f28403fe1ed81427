"""Executed notebook: a training notebook (device in one cell, model in the next, the
loop in a ``%%time`` cell, magics and shell lines around them) is converted, and both
copies run top to bottom in a Jupyter kernel (nbclient, ipykernel's python3 kernel of
this interpreter): the original with plain torch on the CPU, the converted one on
torch_xla 2.9 with ``PJRT_DEVICE=CPU``.  The checks are tests/test_executed.py's: the
same losses, graphs compiled and executed, no new graph after the warm-up.

Compiles are counted per step the way tests/xla_runner.py counts them: a first cell the
test adds to the converted copy (not a cell of the notebook under test) makes ``print``
follow each ``step N loss V`` line with ``XLA_COMPILES <count>``, and a last one prints
``XLA_EXECUTIONS <count>``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from codemods import convert_source
from tests.test_executed import RUN_TIMEOUT, Executed, _environment, _parse, loss_problems, steady_problems, xla_problems

pytestmark = pytest.mark.executed

CELLS = [
    new_markdown_cell("# A small regression, trained in a notebook"),
    new_code_cell("%env TRAINING_STEPS=12\n!echo starting\nfiles = !ls"),
    new_code_cell("import os\nimport torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)"),
    new_code_cell("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nprint(device)"),
    new_code_cell(
        "model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.05)\n"
        "loss_fn = nn.MSELoss()\n"
        "X = torch.randn(12 * 16, 8)\n"
        "Y = torch.tanh(X @ torch.randn(8, 1))"
    ),
    new_code_cell(
        "%%time\n"
        "for step in range(int(os.environ['TRAINING_STEPS'])):\n"
        "    xb = X[step * 16:(step + 1) * 16].to(device)\n"
        "    yb = Y[step * 16:(step + 1) * 16].to(device)\n"
        "    loss = loss_fn(model(xb), yb)\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    print('step {} loss {:.6e}'.format(step, loss.item()))"
    ),
]

COUNT_COMPILES = """\
import builtins
import torch_xla.debug.metrics as _met
_plain_print = builtins.print
def _count(metric):
    data = _met.metric_data(metric)
    return int(data[0]) if data else 0
def _print_with_compiles(*args, **kwargs):
    _plain_print(*args, **kwargs)
    if args and str(args[0]).startswith('step '):
        _plain_print(f'XLA_COMPILES {_count("CompileTime")}', flush=True)
builtins.print = _print_with_compiles"""
COUNT_EXECUTIONS = "builtins.print = _plain_print\nprint(f'XLA_EXECUTIONS {_count(\"ExecuteTime\")}')"

# Runs a notebook in a kernel of this interpreter (ipykernel's python3 kernel spec is the
# native one: jupyter_client starts it with sys.executable), in the notebook's folder.
EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": sys.argv[2]}}).execute()
for cell in nb.cells:
    for output in cell.get("outputs", []):
        if output.get("name") == "stdout":
            sys.stdout.write(output["text"])
"""


def _notebook() -> str:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb) + "\n"


def _execute(path: Path, env: dict[str, str]) -> str:
    command = [sys.executable, "-c", EXECUTE, str(path), str(path.parent)]
    result = subprocess.run(command, cwd=path.parent, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if result.returncode != 0:
        pytest.fail(f"{path} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout


def test_converted_notebook_trains_like_the_original_in_a_kernel(tmp_path: Path) -> None:
    original = _notebook()
    conversion = convert_source(original.encode(), filename="train.ipynb")
    converted = conversion.output.decode()  # type: ignore[union-attr]
    assert converted != original and convert_source(converted, filename="train.ipynb").output == converted

    eager_path = tmp_path / "eager" / "train.ipynb"
    eager_path.parent.mkdir()
    eager_path.write_text(original)
    eager = _parse(_execute(eager_path, _environment()), eager_path.parent)

    data = json.loads(converted)
    data["cells"].insert(0, new_code_cell(COUNT_COMPILES, id="count-compiles"))
    data["cells"].append(new_code_cell(COUNT_EXECUTIONS, id="count-executions"))
    xla_path = tmp_path / "xla" / "train.ipynb"
    xla_path.parent.mkdir()
    xla_path.write_text(json.dumps(data, indent=1))
    xla = _parse(_execute(xla_path, _environment(PJRT_DEVICE="CPU")), xla_path.parent)

    assert len(eager.losses) == 12 and "cpu" in eager.output.splitlines(), eager.output
    assert "xla:0" in xla.output.splitlines() and "starting" in xla.output, xla.output  # cell 3's device; the ! line ran
    problems = [*loss_problems(xla, eager), *xla_problems(xla), *steady_problems(xla, Executed("train.ipynb"))]
    assert not problems, "\n".join(problems)
