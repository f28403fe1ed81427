"""Executed: autovc's solver, whose device is picked on a flag that holds only an availability
check (``self.use_cuda = torch.cuda.is_available()``, switched on by XLA104) and whose optimizer
is built before the model moves, on torch_xla 2.9 (CPU).  XLA203 moves the model first (the
device is XLA on every path once the flag is on): the losses are the eager original's, every
stepped parameter on the XLA device.  The negative control undoes that move: the optimizer
steps the CPU copies the move replaced, and the losses part from the original's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, optimizer_problems, xla_problems

pytestmark = pytest.mark.executed

STEPS = 6
TRAIN = f"""\
import torch
from torch import nn


class Solver:
    def __init__(self):
        self.use_cuda = torch.cuda.is_available()
        self.device = torch.device("cuda:0" if self.use_cuda else "cpu")
        self.build_model()

    def build_model(self):
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-2)
        self.G.to(self.device)

    def train(self):
        for step in range({STEPS}):
            x = torch.randn(16, 4)
            loss = self.G(x.to(self.device)).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    torch.manual_seed(0)
    Solver().train()
"""
PORTED = "self.G.to(torch_xla.device()).parameters()"
UNMOVED = "self.G.parameters()"


def _runs(tmp_path: Path, unmoved: bool) -> tuple[Run, Run]:
    return eager_and_converted_runs(tmp_path, "solver", {"train.py": TRAIN}, PORTED, UNMOVED if unmoved else None)


def test_the_model_moves_before_its_optimizer_is_built(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, unmoved=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []


def test_unmoved_the_optimizer_steps_stale_cpu_copies(tmp_path: Path) -> None:
    """The negative control: the port without the move (what the error left before)."""
    eager, run = _runs(tmp_path, unmoved=True)
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []
