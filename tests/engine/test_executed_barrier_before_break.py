"""Executed: a training loop that ends each epoch early with a ``break`` after the step, on
torch_xla 2.9 (CPU).  The port puts the step barrier before the ``break`` too, so the iteration
that breaks out runs its step graph at its own barrier: the converted script trains like the
eager original (same losses), on XLA, with one graph run per step and no graph compiled after
the first epoch.  The negative control, the same port without the barrier before the
``break``: the breaking step stays pending and is traced together with the next epoch's first
step, so fewer graphs run and a two-step graph is compiled, and the last epoch's breaking step
reaches no barrier, so its loss print (a step closure) never runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, xla_problems

pytestmark = pytest.mark.executed

EPOCHS, STEPS_PER_EPOCH = 4, 3
TRAIN = f"""\
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [torch.randn(8, 4) for _ in range(5)]
    step = 0
    for epoch in range({EPOCHS}):
        for i, x in enumerate(data):
            loss = model(x.to(device)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"step {{step}} loss {{loss.item()}}")
            step += 1
            if i + 1 >= {STEPS_PER_EPOCH}:
                break


if __name__ == "__main__":
    main()
"""
BREAK = "            if i + 1 >= 3:\n"
BARRIER_BEFORE_BREAK = BREAK + "                torch_xla.sync()\n                break\n"


def _runs(tmp_path: Path, keep_the_barrier: bool) -> tuple[Run, Run]:
    without = None if keep_the_barrier else BREAK + "                break\n"
    return eager_and_converted_runs(tmp_path, "breaks", {"train.py": TRAIN}, BARRIER_BEFORE_BREAK, without)


def test_the_barrier_before_the_break_runs_each_step_as_one_graph(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, keep_the_barrier=True)
    assert len(eager.losses) == EPOCHS * STEPS_PER_EPOCH
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == EPOCHS * STEPS_PER_EPOCH, run.output
    assert run.compiles == [run.compiles[0]] * len(run.compiles), run.compiles  # one step graph, compiled once


def test_without_it_the_breaking_step_joins_the_next_epochs_first(tmp_path: Path) -> None:
    """The negative control: one more graph is compiled, fewer run, and the last breaking step
    reaches no barrier at all: its step closure (the loss print) never runs."""
    eager, run = _runs(tmp_path, keep_the_barrier=False)
    assert run.losses == pytest.approx(eager.losses[:-1], rel=1e-3, abs=1e-5)
    assert run.executions < EPOCHS * STEPS_PER_EPOCH, run.output
    assert run.compiles[-1] > run.compiles[0], run.compiles  # the two-step graph
