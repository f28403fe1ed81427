"""Executed: a step in a function bound onto a class at run time (obligation 4), on torch_xla 2.9 (CPU).

The fifteenth held-out list's torchdistill shape: ``default_post`` (registered in a registry by its
decorator) zeroes the gradients, runs the backward pass and steps the box's optimizer; the box class gets
it with ``setattr(Box, "post_forward_process", post)`` (``post`` that function, or what the registry's
getter returns under a config switch); train.py's loop calls ``box.post_forward_process(loss=loss)`` on
a box handed in.  Converted, that loop feeds from a device loader, which ends each step: the project
trains like the eager original (same losses), on XLA, with no new graph after the warm-up; converted
without it (XLA302 and XLA301 off, what the tool did before it followed the binding), each step's
``loss.item()`` compiles a new, bigger graph: the negative control."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from codemods.engine.rule import substituted
from tests.project import test_bound_methods as bound_methods
from tests.support.executed import (
    Executed,
    eager_and_converted_project,
    loss_problems,
    steady_problems,
    training_problems,
)

pytestmark = pytest.mark.executed

# test_bound_methods' box as torchdistill writes it: it builds its own model and binds the step in
# ``__init__``.
BOX = substituted(
    bound_methods.BOX,
    (
        "    def __init__(self, model, device, cfg):\n        self.model = model.to(device)\n",
        "    def __init__(self, device, cfg):\n"
        "        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)\n",
    ),
    ("lr=0.1)\n        self.setup(cfg)\n\n    def setup(self, cfg):\n", "lr=0.05)\n"),
)

TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from box import Box


def train_one_epoch(box, loader, device, epoch):
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = box.forward_process(x, y)
        box.post_forward_process(loss=loss)
        print(f"step {epoch * 6 + i} loss {loss.item()}")


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    box = Box(device, {})
    loader = DataLoader(TensorDataset(torch.randn(48, 4), torch.randn(48, 1)), batch_size=8)
    for epoch in range(3):
        train_one_epoch(box, loader, device, epoch)


if __name__ == "__main__":
    main()
"""

CASE = Executed("train.py", steps_per_epoch=6)

FILES = {"registry.py": bound_methods.REGISTRY, "post.py": bound_methods.POST, "box.py": BOX, "train.py": TRAIN}


def test_a_loop_calling_a_step_bound_at_run_time_ends_each_step_and_trains_like_the_original(tmp_path: Path) -> None:
    want, code, got = eager_and_converted_project(tmp_path, "bound", FILES)
    assert "pl.MpDeviceLoader(loader, device)" in code
    assert len(want.losses) == 18
    problems = training_problems(got, want, CASE)
    assert not problems, problems


def test_without_the_device_loader_each_step_compiles_a_new_graph(tmp_path: Path) -> None:
    want, code, got = eager_and_converted_project(tmp_path, "bound", FILES, RuleSelection(ignore=("XLA301", "XLA302")))
    assert "MpDeviceLoader" not in code and "torch_xla.sync()" not in code
    assert not loss_problems(got, want)
    assert steady_problems(got, CASE)
