"""Executed: an Accelerate trainer whose training loop iterates the loader a method of its class
returns (``for step, x in enumerate(self.create_train_dataloader())``, trlx's shape), which a
function of another module of the project builds (``return DataLoader(...)``) and Accelerate never
prepares (only the model and the optimizer go through ``accelerator.prepare``), on torch_xla 2.9
(CPU), where Accelerate picks its XLA state.  Neither ``accelerator.backward`` nor the prepared
optimizer's step ends the XLA step, so the port follows the loader through the method and the other
module's function and adds the barrier (XLA301), as for a loader built in the loop's function: the
converted script trains like the eager original (same losses), with one graph run per step and no
new graph after the warm-up.  The negative control, the same port without the barrier (what the
tool used to leave, saying "nothing to port"): each step's ``loss.item()`` runs a graph holding
every step before it, a new graph at every step."""

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
DATA = """\
from torch.utils.data import DataLoader


def make_loader(data, batch_size):
    return DataLoader(data, batch_size=batch_size, drop_last=True)
"""
TRAIN = f"""\
import torch
from accelerate import Accelerator

from data import make_loader


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.accelerator = Accelerator()
        model = torch.nn.Linear(8, 1)
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.model, self.opt = self.accelerator.prepare(model, self.opt)
        self.data = torch.randn({STEPS * 4}, 8, generator=torch.Generator().manual_seed(1))

    def create_train_dataloader(self):
        return make_loader(self.data, 4)

    def learn(self):
        for step, x in enumerate(self.create_train_dataloader()):
            x = x.to(self.accelerator.device)
            loss = (self.model(x) - 1).pow(2).mean()
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
            print(f"step {{step}} loss {{loss.item()}}")
        print("DEVICE", next(self.model.parameters()).device.type)


if __name__ == "__main__":
    Trainer().learn()
"""
FILES = {"train.py": TRAIN, "data.py": DATA}
PORTED_STEP_END, UNBARRIERED_STEP_END = step_ends(" " * 12)


def _runs(tmp_path: Path, keep_the_barrier: bool) -> tuple[Run, Run]:
    # USE_TORCH_XLA=0: Accelerate would otherwise pick XLA for the original too.
    changed_to = None if keep_the_barrier else UNBARRIERED_STEP_END
    return eager_and_converted_runs(
        tmp_path, "accel", FILES, PORTED_STEP_END, changed_to, eager_env={"USE_TORCH_XLA": "0"}
    )


def test_the_port_ends_each_step_of_a_loop_over_a_returned_unprepared_loader(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, keep_the_barrier=True)
    assert len(eager.losses) == STEPS
    assert "DEVICE cpu" in eager.output and "DEVICE xla" in run.output, run.output
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, keep_the_barrier=False)
    assert "DEVICE xla" in run.output, run.output
    assert not unbarriered_problems(run, eager, Executed("train.py"))
