"""Executed: a helper of another module that makes tensors of a batch's arrays and moves them
(``for key, value in batch.items(): batch[key] = torch.from_numpy(value).to(device).float()``,
skipping what is no array), on torch_xla 2.9 (CPU), with the checks of tests/support/executed.py.
The port gives its loop no barrier (it makes tensors of host data and moves them: no evaluation
loop, XLA303): the training loop's own barrier ends each step, so the project trains like the
original in eager mode (same losses), with one graph run per step and no new graph after the
warm-up.

Negative control: with a barrier in each iteration of the helper's loop (as the port used to
write it), every step runs more graphs than one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, Run, barrier_per_step_problems, converted_project, run_script, step_ends
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

BATCHES = """\
import numpy as np
import torch


def to_device(batch, device):
    for key, value in batch.items():
        if not isinstance(value, np.ndarray):
            continue
        batch[key] = torch.from_numpy(value).to(device).float()
"""

STEPS = 10

TRAIN = f"""\
import numpy as np
import torch
import torch.nn as nn

from batches import to_device


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    batches = [
        {{"points": rng.standard_normal((16, 4)), "label": rng.standard_normal((16, 1)), "frame_id": "f{{i}}"}}
        for i in range({STEPS})
    ]
    model = nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step, batch in enumerate(batches):
        to_device(batch, device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(batch["points"]), batch["label"])
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    main()
"""

PORTED_STEP_END, _ = step_ends(" " * 8)
MOVE = "        batch[key] = torch.from_numpy(value).to(device).float()\n"
FILES = {"batches.py": BATCHES, "train.py": TRAIN}


def _eager(tmp_path: Path) -> Run:
    return run_script(write_project(tmp_path / "eager", "arrays", FILES), "train.py", on_xla=False)


def test_a_helper_that_makes_and_moves_tensors_gets_no_barrier_and_trains_one_graph_per_step(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = converted_project(tmp_path / "ported", "arrays", FILES)
    assert (folder / "batches.py").read_text() == BATCHES  # no barrier per key
    ported = (folder / "train.py").read_text()
    assert ported.count("torch_xla.sync()") == 1 and PORTED_STEP_END in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_a_barrier_in_the_helpers_loop_runs_more_graphs_per_step(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "barrier-per-key", "arrays", FILES)
    batches = folder / "batches.py"
    text = batches.read_text()
    assert MOVE in text
    batches.write_text("import torch_xla\n" + text.replace(MOVE, MOVE + "        torch_xla.sync()\n"))
    run = run_script(folder, "train.py")
    problems = barrier_per_step_problems(run, _eager(tmp_path), Executed("train.py"), STEPS)
    assert any("graphs run, expected" in p for p in problems), problems
