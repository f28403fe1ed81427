"""Executed: kospeech's Checkpoint.load.  Under ``if torch.cuda.is_available():`` it loads as saved;
in its ``else``, onto the CPU (``map_location=lambda storage, loc: storage``).  The port keeps the
check (it picks no device: XLA105), so on XLA it is False and only the ``else`` runs: XLA403 no longer
adds a map location (an error) to the loads under the check.  The checkpoint is a CUDA run's (its
storages tagged ``cuda:0``, as torch.save writes them on a GPU): the converted script resumes on XLA
from it through the ``else`` and trains like the original's eager run, which takes the same branch on
the CPU.  The negative control makes the check hold: the load under it raises without CUDA, so the
branch the port leaves unported is one that never runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, barrier_per_step_problems, converted_project, run_script
from tests.support.projects import write_project
from tests.support.training_programs import linear_steps

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

# The shared seeded ``nn.Linear(4, 2)`` loop, its model resuming from the checkpoint first.
RESUME = '    model.load_state_dict(load("model.pt"))\n'
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
{linear_steps(STEPS, then=RESUME)}

if __name__ == "__main__":
    main()
"""

KEPT = "    if torch.cuda.is_available():\n        return torch.load(path)\n"


def _folder(folder: Path, convert: bool) -> Path:
    """The project written (converted with ``convert``), with the CUDA run's checkpoint saved in it."""
    files = {"save.py": SAVE, "train.py": TRAIN}
    folder = converted_project(folder, "dead_branch", files) if convert else write_project(folder, "dead_branch", files)
    run_script(folder, "save.py", on_xla=False)
    return folder


def test_a_load_under_a_kept_availability_check_is_left_and_the_else_loads(tmp_path: Path) -> None:
    eager = run_script(_folder(tmp_path / "eager", convert=False), "train.py", on_xla=False)
    folder = _folder(tmp_path / "xla", convert=True)
    script = folder / "train.py"
    converted = script.read_text()
    assert KEPT in converted, converted
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS, eager.output
    # The same losses as the eager run, on XLA, and the graph counts the runner measured: one graph
    # run per step, none new after the warm-up.
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    # The negative control: were the branch to run on XLA, its load of a CUDA run's checkpoint raises.
    script.write_text(converted.replace("if torch.cuda.is_available():\n        return", "if True:\n        return"))
    failed = run_script(folder, "train.py", check=False)
    assert failed.returncode != 0 and "CUDA" in failed.stderr, failed.stderr[-2000:]
