"""Executed: an Accelerate script whose training loop iterates a DataLoader that Accelerate did not
prepare (only the model and the optimizer go through ``accelerator.prepare``), on torch_xla 2.9
(CPU), where Accelerate picks its XLA state.  Neither ``accelerator.backward`` nor the prepared
optimizer's step ends the XLA step, so the port adds the barrier (XLA301): the converted script
trains like the eager original (same losses), with one graph run per step and no new graph after
the warm-up.  The negative control, the same port without the barrier (what the tool used to
leave, calling the loop Accelerate's): each step's ``loss.item()`` runs a graph holding every step
before it, a new graph at every step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    Run,
    barrier_per_step_problems,
    eager_and_converted_runs,
    step_ends,
    unbarriered_problems,
)

pytestmark = pytest.mark.executed

STEPS = 10
TRAIN = f"""\
import torch
from accelerate import Accelerator


def main():
    torch.manual_seed(0)
    acc = Accelerator()
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = acc.prepare(model, opt)
    data = torch.randn({STEPS * 4}, 8, generator=torch.Generator().manual_seed(1))
    loader = torch.utils.data.DataLoader(data, batch_size=4, drop_last=True)
    for step, x in enumerate(loader):
        x = x.to(acc.device)
        loss = (model(x) - 1).pow(2).mean()
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
        print(f"step {{step}} loss {{loss.item()}}")
    print("DEVICE", next(model.parameters()).device.type)


if __name__ == "__main__":
    main()
"""
FILES = {"train.py": TRAIN}
PORTED_STEP_END, UNBARRIERED_STEP_END = step_ends(" " * 8)


def _runs(tmp_path: Path, keep_the_barrier: bool) -> tuple[Run, Run]:
    # USE_TORCH_XLA=0: Accelerate would otherwise pick XLA for the original too.
    changed_to = None if keep_the_barrier else UNBARRIERED_STEP_END
    return eager_and_converted_runs(
        tmp_path, "accel", FILES, PORTED_STEP_END, changed_to, eager_env={"USE_TORCH_XLA": "0"}
    )


def test_the_port_ends_each_step_of_a_loop_over_an_unprepared_loader(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, keep_the_barrier=True)
    assert len(eager.losses) == STEPS
    assert "DEVICE cpu" in eager.output and "DEVICE xla" in run.output, run.output
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, keep_the_barrier=False)
    assert "DEVICE xla" in run.output, run.output
    assert not unbarriered_problems(run, eager, Executed("train.py"))
