"""Executed: kospeech's Checkpoint.load.  Under ``if torch.cuda.is_available():`` it loads as saved;
in its ``else``, onto the CPU (``map_location=lambda storage, loc: storage``).  The port keeps the
check (it picks no device: XLA105), so on XLA it is False and only the ``else`` runs: XLA403 no longer
adds a map location (an error) to the loads under the check.  The checkpoint is a CUDA run's (its
storages tagged ``cuda:0``, as torch.save writes them on a GPU): the converted script resumes on XLA
from it through the ``else`` and trains like the original's eager run, which takes the same branch on
the CPU.  The negative control makes the check hold: the load under it raises without CUDA, so the
branch the port leaves unported is one that never runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    barrier_per_step_problems,
    converted_project,
    run_environment,
    run_script,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 8

# A CUDA run's checkpoint, written without CUDA: torch.save tags each storage by location_tag.
SAVE = """\
import torch
import torch.nn as nn

torch.manual_seed(1)
torch.serialization.location_tag = lambda storage: "cuda:0"
torch.save(nn.Linear(4, 2).state_dict(), "model.pt")
"""

TRAIN = f"""\
import torch
import torch.nn as nn


def load(path):
    if torch.cuda.is_available():
        return torch.load(path)
    else:
        return torch.load(path, map_location=lambda storage, loc: storage)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2)
    model.load_state_dict(load("model.pt"))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(0)
    for step in range({STEPS}):
        x, y = torch.randn(8, 4), torch.randn(8, 2)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    main()
"""

KEPT = "    if torch.cuda.is_available():\n        return torch.load(path)\n"


def _folder(folder: Path, convert: bool) -> Path:
    files = {"save.py": SAVE, "train.py": TRAIN}
    folder = converted_project(folder, "dead_branch", files) if convert else write_project(folder, "dead_branch", files)
    subprocess.run([sys.executable, "save.py"], cwd=folder, env=run_environment(), check=True, timeout=300)
    return folder


def test_a_load_under_a_kept_availability_check_is_left_and_the_else_loads(tmp_path: Path) -> None:
    eager = run_script(_folder(tmp_path / "eager", convert=False), "train.py", on_xla=False)
    folder = _folder(tmp_path / "xla", convert=True)
    script = folder / "train.py"
    converted = script.read_text()
    assert KEPT in converted, converted
    run = run_script(folder, "train.py")
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    # The negative control: were the branch to run on XLA, its load of a CUDA run's checkpoint raises.
    script.write_text(converted.replace("if torch.cuda.is_available():\n        return", "if True:\n        return"))
    failed = run_script(folder, "train.py", check=False)
    assert failed.returncode != 0 and "CUDA" in failed.stderr, failed.stderr[-2000:]
