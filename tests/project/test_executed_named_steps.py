"""Executed: the loop that drives a registry model's step (obligation 4), on torch_xla 2.9 (CPU).

The model is built through a registry (``build_model(opt)`` returns ``MODELS.get(opt["type"])(opt)``,
its modules loaded by a folder scan), so the tool cannot tell its class; its
``optimize_parameters`` is named like the project's method that takes the step, so the loop of
train.py that calls it gets the step barrier.  Converted, the project trains like the eager
original (same losses), on XLA, with no new graph after the warm-up; converted without that
barrier (XLA301 off), each step's ``loss.item()`` compiles a new, bigger graph: the negative control."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import (
    Executed,
    eager_and_converted_project,
    loss_problems,
    steady_problems,
    training_problems,
)
from tests.support.training_programs import REGISTRY, REGISTRY_MODELS_INIT

pytestmark = pytest.mark.executed

SR_MODEL = """\
import torch

from registry import MODELS


@MODELS.register
class SRModel:
    def __init__(self, opt):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(self.device)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=opt["lr"])

    def feed_data(self, data):
        self.lq = data[0].to(self.device)
        self.gt = data[1].to(self.device)

    def optimize_parameters(self, current_iter):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(self.lq), self.gt)
        loss.backward()
        self.optimizer.step()
        return loss
"""

TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from models import build_model


def main():
    torch.manual_seed(0)
    model = build_model({"type": "SRModel", "lr": 0.05})
    loader = DataLoader(TensorDataset(torch.randn(48, 4), torch.randn(48, 1)), batch_size=8)
    step = 0
    for epoch in range(3):
        for data in loader:
            model.feed_data(data)
            loss = model.optimize_parameters(step)
            print(f"step {step} loss {loss.item()}")
            step += 1


if __name__ == "__main__":
    main()
"""

CASE = Executed("train.py", steps_per_epoch=6)


FILES = {
    "registry.py": REGISTRY,
    "models/__init__.py": REGISTRY_MODELS_INIT,
    "models/sr_model.py": SR_MODEL,
    "train.py": TRAIN,
}


def test_a_registry_models_step_gets_its_barrier_in_the_loop_that_calls_it_and_trains_like_the_original(
    tmp_path: Path,
) -> None:
    want, code, got = eager_and_converted_project(tmp_path, "registry", FILES)
    assert "torch_xla.sync()" in code
    assert len(want.losses) == 18
    problems = training_problems(got, want, CASE)
    assert not problems, problems


def test_without_that_barrier_each_step_compiles_a_new_graph(tmp_path: Path) -> None:
    want, code, got = eager_and_converted_project(tmp_path, "registry", FILES, RuleSelection(ignore=("XLA301",)))
    assert "torch_xla.sync()" not in code
    assert not loss_problems(got, want)
    assert steady_problems(got, CASE)
