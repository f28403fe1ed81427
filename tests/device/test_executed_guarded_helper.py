"""Executed: an availability check around a call of a project helper that moves to CUDA (the
eighth held-out list's Palette shape: ``set_device(x)`` runs ``x = to_gpu(x)`` only ``if
torch.cuda.is_available():``, and ``to_gpu`` returns ``x.cuda()``), reached by a trainer in another
module through ``functools.partial``.  Converted, the check is dropped (XLA104) and the model and
its batches train on the XLA device.  The negative control, the same project converted with XLA104
off, keeps the check, which is False on an XLA host: the model stays on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

UTIL = """\
import torch


def to_gpu(x):
    if x is None:
        return None
    return x.cuda()


def set_device(x, rank=0):
    if torch.cuda.is_available():
        x = to_gpu(x)
    return x
"""

TRAINER = """\
from functools import partial

import torch

import util


class Trainer:
    def __init__(self, net, loader, rank=0):
        self.set_device = partial(util.set_device, rank=rank)
        self.net = self.set_device(net)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.loader = loader

    def train_epoch(self):
        for x in self.loader:
            x = self.set_device(x)
            self.opt.zero_grad()
            self.net(x).pow(2).mean().backward()
            self.opt.step()
"""

MAIN = """\
import torch
import torch.nn as nn

from trainer import Trainer

torch.manual_seed(0)
net = nn.Linear(4, 2)
before = net.weight.detach().clone()
t = Trainer(net, [torch.randn(8, 4) for _ in range(3)])
t.train_epoch()
changed = not torch.equal(before, t.net.weight.detach().cpu())
print(f"model on {t.net.weight.device.type} changed {changed}")
"""


def _run(folder: Path, selection: RuleSelection | None = None) -> tuple[str, str]:
    """The converted util.py and what the converted project prints on torch_xla (CPU)."""
    converted_project(folder, "guarded", {"util.py": UTIL, "trainer.py": TRAINER, "main.py": MAIN}, selection)
    return (folder / "util.py").read_text(), run_script(folder, "main.py").output


def test_a_check_around_a_helper_that_moves_is_dropped_and_the_model_trains_on_xla(tmp_path: Path) -> None:
    util, output = _run(tmp_path / "ported")
    assert "is_available" not in util, util
    assert "model on xla changed True" in output, output


def test_without_xla104_the_check_stays_and_the_model_stays_on_the_cpu(tmp_path: Path) -> None:
    util, output = _run(tmp_path / "kept", RuleSelection(ignore=("XLA104",)))
    assert "if torch.cuda.is_available():" in util, util
    assert "model on cpu changed True" in output, output
