"""Executed: a training step over micro-batches (gradient accumulation: ``for i in range(chunks):``
backs each chunk, the optimizer steps once after it; Multimodal-Transformer's shape) whose model
builds its targets per item in its forward (a loop that moves each item and reduces it: AdelaiDet's
FCPose), on torch_xla 2.9 (CPU).  The port ends each training iteration with one barrier and puts
none in the inner loops (XLA301, XLA303): the eager original's losses, one graph run per step.  The
negative control, a barrier in the micro-batch loop (the port's old form, which took it for the
training loop): the same losses, an extra graph run per micro-batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, xla_problems

pytestmark = pytest.mark.executed

STEPS = 6
CHUNKS = 2

SCRIPT = f"""\
import torch

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def targets(items, device):
    out = []
    for item in items:
        out.append(item.to(device).max(dim=0)[0])
    return torch.stack(out)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x, items):
        return torch.nn.functional.mse_loss(self.fc(x), targets(items, x.device))


model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
chunks = {CHUNKS}
xs = torch.randn({STEPS}, 8, 4)
items = torch.randn({STEPS}, 8, 2, 3)
for step in range({STEPS}):
    x = xs[step].to(device)
    optimizer.zero_grad()
    total = 0.0
    if chunks > 1:
        for i in range(chunks):
            loss = model(x.chunk(chunks)[i], list(items[step].chunk(chunks)[i])) / chunks
            loss.backward()
            total = total + loss.detach()
    else:
        total = model(x, list(items[step]))
        total.backward()
    optimizer.step()
    print("step %d loss %.6f" % (step, total))
"""

BACKWARD = "            loss.backward()\n"


def _runs(tmp_path: Path, barrier_per_chunk: bool) -> tuple[Run, Run]:
    changed = BACKWARD + "            torch_xla.sync()\n" if barrier_per_chunk else None
    return eager_and_converted_runs(tmp_path, "accumulates", {"train.py": SCRIPT}, BACKWARD, changed)


def test_one_barrier_per_step_over_its_micro_batches(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, barrier_per_chunk=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == STEPS, run.output


def test_a_barrier_per_micro_batch_runs_more_graphs(tmp_path: Path) -> None:
    """The negative control: the same losses, a graph run per micro-batch besides the step's."""
    eager, run = _runs(tmp_path, barrier_per_chunk=True)
    assert loss_problems(run, eager) == []
    assert run.executions > STEPS, run.output
