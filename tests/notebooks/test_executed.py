"""Executed notebook: a training notebook (device in one cell, model in the next, the
loop in a ``%%time`` cell, magics and shell lines around them) is converted, and both
copies run top to bottom in a Jupyter kernel (nbclient, and an ipykernel kernel spec of
this interpreter that the test installs in its own folder, so that no kernel of the
machine is used): the original with plain torch on the CPU, the converted one on
torch_xla 2.9 with ``PJRT_DEVICE=CPU``.  The checks are tests/support/executed.py's: the
same losses, graphs compiled and executed, no new graph after the warm-up.

Compiles are counted per step the way tests/support/runners/xla_runner.py counts them: a
first cell the test adds to the converted copy (not a cell of the notebook under test) makes
``print`` follow each ``step N loss V`` line with ``XLA_COMPILES <count>``, and a last one prints
``XLA_EXECUTIONS <count>``.  Negative control: converted without its step barrier, the
notebook compiles a graph per step, and the counting in the kernel sees it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from codemods import RuleSelection, convert_source
from tests.support.executed import (
    RUN_TIMEOUT,
    Executed,
    Run,
    loss_problems,
    parse_run,
    run_environment,
    steady_problems,
    xla_problems,
)

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
    # A script the notebook writes and runs in a process of its own: ported as a file.
    new_code_cell(
        "%%writefile small_train.py\n"
        "import torch\n"
        "torch.manual_seed(1)\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = torch.nn.Linear(4, 1).to(device)\n"
        "opt = torch.optim.Adam(model.parameters(), lr=0.01)\n"
        "data = torch.randn(8, 16, 4)\n"
        "print('script device', device)\n"
        "for step in range(8):\n"
        "    loss = model(data[step].to(device)).pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    print('script step {} loss {:.6e}'.format(step, loss.item()))\n"
    ),
    new_code_cell("import sys\n!{sys.executable} small_train.py"),
]
SCRIPT_STEP = re.compile(r"^script step \d+ loss (\S+)$", re.MULTILINE)

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

CASE = Executed("train.ipynb")  # one pass of 12 steps: a warm-up of 3, then 9 steady ones
KERNEL = "xla-codemod-test"
# Runs a notebook in the test's kernel, in the notebook's folder; prints what it printed.
EXECUTE = f"""
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, kernel_name="{KERNEL}", timeout=600, resources={{"metadata": {{"path": sys.argv[2]}}}}).execute()
for cell in nb.cells:
    for output in cell.get("outputs", []):
        if output.get("name") == "stdout":
            sys.stdout.write(output["text"])
"""


def _notebook() -> str:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    text: str = nbformat.writes(nb)
    return text + "\n"


def _kernel(prefix: Path) -> dict[str, str]:
    """Installs a kernel spec of this interpreter under ``prefix``; the environment that finds it first."""
    install = [sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix), "--name", KERNEL]
    subprocess.run(install, check=True, capture_output=True, timeout=RUN_TIMEOUT)
    return {"JUPYTER_PATH": str(prefix / "share" / "jupyter")}


def _execute(path: Path, env: dict[str, str]) -> str:
    command = [sys.executable, "-c", EXECUTE, str(path), str(path.parent)]
    result = subprocess.run(command, cwd=path.parent, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if result.returncode != 0:
        pytest.fail(f"{path} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout


def run_converted(tmp_path: Path, kernel: dict[str, str], selection: RuleSelection | None = None) -> Run:
    """The notebook converted (a fixed point), with the counting cells around it, run on XLA."""
    original = _notebook()
    converted = convert_source(original.encode(), filename="train.ipynb", selection=selection).output.decode()  # type: ignore[union-attr]
    assert (
        converted != original
        and convert_source(converted, filename="train.ipynb", selection=selection).output == converted
    )
    data = json.loads(converted)
    data["cells"].insert(0, new_code_cell(COUNT_COMPILES, id="count-compiles"))
    data["cells"].append(new_code_cell(COUNT_EXECUTIONS, id="count-executions"))
    path = tmp_path / "xla" / "train.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(data, indent=1))
    return parse_run(_execute(path, run_environment(PJRT_DEVICE="CPU", **kernel)), path.parent)


def test_converted_notebook_trains_like_the_original_in_a_kernel(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path / "kernel")
    eager_path = tmp_path / "eager" / "train.ipynb"
    eager_path.parent.mkdir()
    eager_path.write_text(_notebook())
    eager = parse_run(_execute(eager_path, run_environment(**kernel)), eager_path.parent)
    xla = run_converted(tmp_path, kernel)
    assert len(eager.losses) == 12 and "cpu" in eager.output.splitlines(), eager.output
    assert "xla:0" in xla.output.splitlines() and "starting" in xla.output, (
        xla.output
    )  # cell 3's device; the ! line ran
    problems = [*loss_problems(xla, eager), *xla_problems(xla), *steady_problems(xla, CASE)]
    # The written script, run by the notebook: on XLA once ported, with the eager losses.
    script_xla, script_eager = (
        Run([float(v) for v in SCRIPT_STEP.findall(r.output)], [], 0, r.folder, "") for r in (xla, eager)
    )
    assert "script device xla:0" in xla.output and "script device cpu" in eager.output
    assert len(script_eager.losses) == 8, eager.output
    problems += [f"written script: {p}" for p in loss_problems(script_xla, script_eager)]
    assert not problems, "\n".join(problems)


def test_compiles_are_counted_in_the_kernel(tmp_path: Path) -> None:
    """Negative control: converted without its step barrier, the loop of the %%time cell
    compiles a new graph every step, and the counting cells see it."""
    xla = run_converted(tmp_path, _kernel(tmp_path / "kernel"), RuleSelection(ignore=("XLA301", "XLA302")))
    assert not xla_problems(xla)
    (problem,) = steady_problems(xla, CASE)
    assert problem.startswith("no steady state"), problem
