"""A project's optimizer wrapper (``class Optimizer:`` whose ``step`` steps the optimizer it
holds, through a gradient scaler or not) in one module, the training loop that calls its
``step`` in another: the loop gets the step barrier, the wrapper's own ``step`` neither a
barrier (XLA305) nor an undriven-step error (XLA306); a bare ``step`` variable runs no method."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

_OPTIMIZERS = """import torch


def warmup(step):
    return min(1.0, float(step))


class Optimizer:
    def __init__(self, optimizer, scaler=None):
        self._optimizer = optimizer
        self._scaler = scaler

    def zero_grad(self):
        self._optimizer.zero_grad()

    def step(self):
        if self._scaler is not None:
            self._scaler.step(self._optimizer)
            self._scaler.update()
        else:
            self._optimizer.step()
"""
_TRAIN = """import torch
from torch import nn

from optimizers import Optimizer

model = nn.Linear(4, 2).cuda()
optim = Optimizer(torch.optim.SGD(model.parameters(), lr=0.1))
for _ in range(10):
    optim.zero_grad()
    model(torch.randn(8, 4).cuda()).sum().backward()
    optim.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_callers_loop_drives_the_wrappers_step(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"optimizers.py": _OPTIMIZERS, "train.py": _TRAIN})
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in ("optimizers.py", "train.py")], workers=1)
    codes = {Path(r.path).name: [(f.rule, f.line) for f in r.findings] for r in reports}
    assert not [c for c in codes["optimizers.py"] if c[0] in ("XLA305", "XLA306")]
    assert ("XLA301", 8) in codes["train.py"]  # the loop that calls ``optim.step()`` gets the barrier
