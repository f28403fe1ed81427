"""Executed: a resume from a checkpoint that holds a whole pickled module (``torch.save({"model":
model}, path)``, then ``model = checkpoint["model"]``), on torch_xla 2.9 (CPU).  XLA cannot load
straight onto its device (``map_location=<the XLA device>`` raises "don't know how to restore data
location"), so XLA403 loads on the CPU; no load_state_dict follows, so it also moves the module
to the XLA device after the load: the converted script trains on XLA with the eager original's
losses, one graph per step after the warm-up.  The negative control, the port's old form (the CPU
load alone): the module stays on the CPU while the batches go to XLA, and the run fails.  And an
optimizer pickled with the module holds the CPU parameters the move replaces: XLA403 reports it,
and run as converted it steps none of the module's (the losses of an untrained model)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    Run,
    converted_project,
    loss_problems,
    optimizer_problems,
    run_environment,
    run_script,
    steady_problems,
    xla_problems,
)
from tests.support.projects import unfixed_findings, write_project

pytestmark = pytest.mark.executed

STEPS = 10
SAVE = """\
import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
torch.save({"model": model, "optimizer": optimizer, "epoch": 3}, "checkpoint.pt")
"""
TRAIN = f"""\
import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    checkpoint = torch.load("checkpoint.pt", map_location=device, weights_only=False)
    model = checkpoint["model"]
    OPTIMIZER
    for step in range({STEPS}):
        x = torch.randn(16, 4)
        y = x[:, :2].sin()
        loss = F.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item():.6f}}")


if __name__ == "__main__":
    main()
"""
REBUILT = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"
PICKLED = 'optimizer = checkpoint["optimizer"]'
MOVED = 'model = checkpoint["model"].to(torch_xla.device())'
CPU_ONLY = 'model = checkpoint["model"]'


def _project(folder: Path, optimizer: str, convert: bool) -> Path:
    files = {"save.py": SAVE, "train.py": TRAIN.replace("OPTIMIZER", optimizer)}
    folder = converted_project(folder, "resume", files) if convert else write_project(folder, "resume", files)
    subprocess.run([sys.executable, "save.py"], cwd=folder, env=run_environment(), check=True, timeout=300)
    return folder


def _runs(tmp_path: Path, optimizer: str, old_port: bool = False) -> tuple[Run, Run, str]:
    eager = run_script(_project(tmp_path / "eager", optimizer, convert=False), "train.py", on_xla=False)
    folder = _project(tmp_path / "xla", optimizer, convert=True)
    converted = (folder / "train.py").read_text()
    assert 'map_location="cpu"' in converted and MOVED in converted, converted
    if old_port:
        (folder / "train.py").write_text(converted.replace(MOVED, CPU_ONLY))
    return eager, run_script(folder, "train.py", check=not old_port), converted


def test_a_pickled_module_moved_after_the_load_trains_on_xla(tmp_path: Path) -> None:
    eager, run, _ = _runs(tmp_path, REBUILT)
    assert len(eager.losses) == STEPS
    case = Executed("train.py")
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) + steady_problems(run, case) == []


def test_the_old_port_leaves_the_module_on_the_cpu(tmp_path: Path) -> None:
    """The negative control: the CPU load alone, the module on the CPU, the batches on XLA."""
    _, run, _ = _runs(tmp_path, REBUILT, old_port=True)
    assert run.returncode != 0 and not run.losses, run.output
    assert "device" in run.stderr, run.stderr[-2000:]


def test_an_optimizer_pickled_with_the_module_is_reported_and_steps_nothing(tmp_path: Path) -> None:
    """The optimizer comes back holding the CPU parameters the move replaces: XLA403 says so (an
    error), and the converted run shows why: the module never changes (the eager run learns)."""
    files = {"save.py": SAVE, "train.py": TRAIN.replace("OPTIMIZER", PICKLED)}
    folder = write_project(tmp_path / "lint", "resume", files)
    for target in ("2.9", "sagemaker"):
        unfixed = unfixed_findings(folder, ["train.py"], target)["train.py"]
        assert [(rule, line) for rule, line, message in unfixed if "`optimizer` comes back" in message] == [
            ("XLA403", 10)
        ], unfixed
    eager, run, _ = _runs(tmp_path, PICKLED)
    assert eager.losses[-1] < eager.losses[0] * 0.9, eager.losses
    assert loss_problems(run, eager), (run.losses, eager.losses)
    assert optimizer_problems(run), run.output
