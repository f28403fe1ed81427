"""Executed: a script that picks no device, whose model class another project module defines and a
module of constants names (``import model, args``; ``getattr(model, args.model)(adj)``,
vgae_pytorch).  The run on the project leaves it unchanged (XLA005): on torch_xla it trains as the
eager original does, on the CPU, and compiles no graph.  The negative control is the port the tool
used to write (``xm.optimizer_step`` and the step barrier in the loop): it still steps CPU
parameters, so porting the loop alone would not have moved the training to XLA.  Moving the model
and its input by hand, as the finding asks, and converting again does (the control of the probe)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection, substituted
from codemods.runner import Job, run
from tests.project.test_getattr_module_lookups import MODEL as GAE_MODEL
from tests.support.executed import convert_folder, eager_project_run, loss_problems, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

# test_getattr_module_lookups's model module, its adjacency a buffer (so that a move takes it along).
MODEL = substituted(GAE_MODEL, ("self.adj = adj\n", 'self.register_buffer("adj", adj)\n'))
ARGS = """\
model = "GAE"
input_dim = 4
learning_rate = 0.05
"""
TRAIN = """\
import torch

import args
import model

torch.manual_seed(0)
model = getattr(model, args.model)(torch.eye(3))
optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
x = torch.rand(3, 4)
for step in range(8):
    optimizer.zero_grad()
    loss = (model(x) - 1.0).pow(2).mean()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
"""
FILES = {"args.py": ARGS, "model.py": MODEL, "train.py": TRAIN}
# What the tool used to make of the script: its loop ported, nothing moved.
HALF_PORT = (
    TRAIN.replace("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n", 1)
    .replace("    optimizer.step()\n", "    xm.optimizer_step(optimizer)\n")
    .replace('    print(f"step', '    torch_xla.sync()\n    print(f"step')
)
# What the finding asks: the model and its input moved to the XLA device by hand.
MOVED = (
    TRAIN.replace("(torch.eye(3))\n", "(torch.eye(3)).to(DEVICE)\n")
    .replace("torch.rand(3, 4)\n", "torch.rand(3, 4).to(DEVICE)\n")
    .replace("import torch\n", 'import torch\n\nDEVICE = "cuda"\n', 1)
)


def _converted(folder: Path, files: dict[str, str]) -> dict[str, list[str]]:
    """The project converted as one run (written back): the rules of each file's findings."""
    write_project(folder, "gae", files)
    job = Job("lint", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    convert_folder(folder)
    return {Path(r.path).name: [f.rule for f in r.findings] for r in reports}


def test_a_script_whose_modules_name_no_device_is_left_on_the_cpu(tmp_path: Path) -> None:
    eager = eager_project_run(tmp_path, "gae", FILES)
    assert len(eager.losses) == 8 and eager.losses[-1] < eager.losses[0]
    folder = tmp_path / "xla"
    assert _converted(folder, FILES)["train.py"] == ["XLA005"]
    assert (folder / "train.py").read_text() == TRAIN  # left unchanged
    xla = run_script(folder, "train.py")
    assert not loss_problems(xla, eager)
    assert xla.stepped_devices == ("cpu",) and xla.compiles[-1] == 0, (xla.stepped_devices, xla.compiles)

    # Negative control: the loop ported alone still steps the CPU parameters.
    half = tmp_path / "half"
    write_project(half, "gae", {**FILES, "train.py": HALF_PORT})
    ported = run_script(half, "train.py")
    assert not loss_problems(ported, eager)
    assert ported.stepped_devices == ("cpu",), ported.stepped_devices

    # The probe's control: moved by hand as the finding asks, converted again, it trains on XLA.
    moved = tmp_path / "moved"
    assert "XLA005" not in _converted(moved, {**FILES, "train.py": MOVED})["train.py"]
    assert "torch_xla" in (moved / "train.py").read_text()
    on_xla = run_script(moved, "train.py")
    assert not loss_problems(on_xla, eager)
    assert on_xla.stepped_devices == ("xla",), on_xla.stepped_devices
