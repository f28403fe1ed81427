"""Executed: Accelerate training loops that iterate a DataLoader Accelerate did not prepare (only the
model and the optimizer go through ``accelerator.prepare``), on torch_xla 2.9 (CPU), where Accelerate
picks its XLA state.  Neither ``accelerator.backward`` nor the prepared optimizer's step ends the XLA
step, so the port adds the barrier (XLA301).  Two places the loader comes from:
  * ``in-the-loops-function``: built in the loop's function (``torch.utils.data.DataLoader(...)``);
    the tool used to leave it, calling the loop Accelerate's.
  * ``returned-by-a-method``: trlx's shape, ``for step, x in enumerate(self.create_train_dataloader())``,
    the method returning what a function of another module of the project builds
    (``return DataLoader(...)``); the port follows the loader through the method and the other
    module's function.  The tool used to leave it, saying "nothing to port".
Each converted script trains like the eager original (same losses), with one graph run per step and
no new graph after the warm-up.  The negative control of each, the same port without the barrier
(what the tool used to leave): each step's ``loss.item()`` runs a graph holding every step before it,
a new graph at every step."""

from __future__ import annotations

from dataclasses import dataclass
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
IN_THE_LOOPS_FUNCTION = f"""\
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
DATA = """\
from torch.utils.data import DataLoader


def make_loader(data, batch_size):
    return DataLoader(data, batch_size=batch_size, drop_last=True)
"""
RETURNED_BY_A_METHOD = f"""\
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


@dataclass(frozen=True)
class Loop:
    """A project (``files``, its ``train.py`` training) whose loop body stands ``indent`` deep."""

    files: dict[str, str]
    indent: str

    def runs(self, tmp_path: Path, keep_the_barrier: bool) -> tuple[Run, Run]:
        """The eager original's run and the converted one's, on XLA (its barrier taken out unless
        ``keep_the_barrier``).  USE_TORCH_XLA=0: Accelerate would otherwise pick XLA for the
        original too."""
        ported, unbarriered = step_ends(self.indent)
        changed_to = None if keep_the_barrier else unbarriered
        return eager_and_converted_runs(
            tmp_path, "accel", self.files, ported, changed_to, eager_env={"USE_TORCH_XLA": "0"}
        )


LOOPS = {
    "in-the-loops-function": Loop({"train.py": IN_THE_LOOPS_FUNCTION}, " " * 8),
    "returned-by-a-method": Loop({"train.py": RETURNED_BY_A_METHOD, "data.py": DATA}, " " * 12),
}
BY_LOOP = pytest.mark.parametrize("loop", list(LOOPS.values()), ids=list(LOOPS))


@BY_LOOP
def test_the_port_ends_each_step_of_a_loop_over_an_unprepared_loader(loop: Loop, tmp_path: Path) -> None:
    eager, run = loop.runs(tmp_path, keep_the_barrier=True)
    assert len(eager.losses) == STEPS
    assert "DEVICE cpu" in eager.output and "DEVICE xla" in run.output, run.output
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


@BY_LOOP
def test_without_the_barrier_each_step_compiles_a_bigger_graph(loop: Loop, tmp_path: Path) -> None:
    eager, run = loop.runs(tmp_path, keep_the_barrier=False)
    assert len(eager.losses) == STEPS
    assert "DEVICE xla" in run.output, run.output
    problems = unbarriered_problems(run, eager, Executed("train.py"))
    assert not problems, problems
