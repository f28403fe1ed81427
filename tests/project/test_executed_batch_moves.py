"""Executed: loops that only move a batch's tensors to the device (``for k, v in
batch.items(): batch[k] = v.to(device)`` in a helper of another module, and a model's
``get_inputs`` that moves and casts each feature, skipping the label), on torch_xla 2.9 (CPU),
with the checks of tests/support/executed.py.  The port gives them no barrier (they are no
evaluation loops: XLA303): the training loop's own barrier ends each step, so the project
trains like the original in eager mode (same losses), with one graph run per step and no new
graph after the warm-up.

Negative controls: the converted project without the training loop's barrier compiles a
bigger graph at every step; with a barrier in each iteration of the model's move loop (as the
port used to write it), every step runs more graphs than one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    Run,
    barrier_per_step_problems,
    converted_project,
    run_script,
    step_ends,
    unbarriered_problems,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

BATCHES = """\
def to_device(batch, device):
    for key, value in batch.items():
        batch[key] = value.to(device)
    return batch
"""

STEPS = 10

TRAIN = f"""\
import torch
import torch.nn as nn

from batches import to_device


class Ranker(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device
        self.fc = nn.Linear(8, 1)

    def get_inputs(self, batch):
        inputs = {{}}
        for name, value in batch.items():
            if name == "label":
                continue
            inputs[name] = value.to(self.device).float()
        return inputs

    def forward(self, batch):
        inputs = self.get_inputs(batch)
        return self.fc(torch.cat([inputs["a"], inputs["b"]], dim=1))


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    batches = [
        {{"a": torch.randint(0, 5, (16, 4)), "b": torch.randint(0, 5, (16, 4)), "label": torch.randn(16, 1)}}
        for _ in range({STEPS})
    ]
    model = Ranker(device).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step, batch in enumerate(batches):
        batch = to_device(batch, device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(batch), batch["label"])
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    main()
"""

PORTED_STEP_END, UNBARRIERED_STEP_END = step_ends(" " * 8)
MOVE = "            inputs[name] = value.to(self.device).float()\n"


FILES = {"batches.py": BATCHES, "train.py": TRAIN}


def _eager(tmp_path: Path) -> Run:
    return run_script(write_project(tmp_path / "eager", "moves", FILES), "train.py", on_xla=False)


def test_loops_that_only_move_a_batch_get_no_barrier_and_train_one_graph_per_step(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = converted_project(tmp_path / "ported", "moves", FILES)
    ported = (folder / "train.py").read_text()
    assert (folder / "batches.py").read_text() == BATCHES
    assert MOVE in ported and ported.count("torch_xla.sync()") == 1 and PORTED_STEP_END in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_without_the_training_loops_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "no-barrier", "moves", FILES)
    train = folder / "train.py"
    train.write_text(train.read_text().replace(PORTED_STEP_END, UNBARRIERED_STEP_END))
    run = run_script(folder, "train.py")
    assert not unbarriered_problems(run, _eager(tmp_path), Executed("train.py"))


def test_a_barrier_in_the_move_loop_runs_more_graphs_per_step(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "barrier-per-move", "moves", FILES)
    train = folder / "train.py"
    text = train.read_text()
    train.write_text(text.replace(MOVE, MOVE + "            torch_xla.sync()\n"))
    run = run_script(folder, "train.py")
    problems = barrier_per_step_problems(run, _eager(tmp_path), Executed("train.py"), STEPS)
    assert any("graphs run, expected" in p for p in problems), problems
