"""A base class of another module whose ``save_networks`` moves each network it looks up by a built
name (``net = getattr(self, 'net' + name)``) to the CPU and back (``torch.save(net.module.cpu()
.state_dict(), path)``, then ``net.cuda(...)``: CUT's models/base_model.py), and a subclass whose
optimizers step those networks (``self.optimizer_G`` over ``self.netG``): on XLA the moves replace
the Parameter objects, so the subclass's optimizers step the old ones after the first checkpoint
(XLA203 at each optimizer, naming the base's method).  A subclass that overrides the method, or
whose optimizers step attributes the lookup's prefix never names, gets no finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

BASE = """import torch


class BaseModel:
    def __init__(self, opt):
        self.gpu_ids = opt.gpu_ids
        self.model_names = []

    def save_networks(self, epoch):
        for name in self.model_names:
            net = getattr(self, 'net' + name)
            if len(self.gpu_ids) > 0 and torch.cuda.is_available():
                torch.save(net.module.cpu().state_dict(), '%s_net_%s.pth' % (epoch, name))
                net.cuda(self.gpu_ids[0])
            else:
                torch.save(net.cpu().state_dict(), '%s_net_%s.pth' % (epoch, name))
"""

CUT = """import torch
from .base_model import BaseModel


class CUTModel(BaseModel):
    def __init__(self, opt):
        BaseModel.__init__(self, opt)
        self.model_names = ['G', 'D']
        self.netG = torch.nn.DataParallel(torch.nn.Linear(4, 4).cuda(0))
        self.netD = torch.nn.DataParallel(torch.nn.Linear(4, 1).cuda(0))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-3)
        self.head = torch.nn.Linear(1, 1).cuda(0)
        self.optimizer_H = torch.optim.Adam(self.head.parameters(), lr=1e-3)

    def optimize_parameters(self, x):
        loss = self.netD(self.netG(x)).mean() + self.head(x[:, :1]).mean()
        for optimizer in (self.optimizer_G, self.optimizer_D, self.optimizer_H):
            optimizer.zero_grad()
        loss.backward()
        for optimizer in (self.optimizer_G, self.optimizer_D, self.optimizer_H):
            optimizer.step()
"""

OVERRIDING = """

    def save_networks(self, epoch):
        for name in self.model_names:
            torch.save(getattr(self, 'net' + name).state_dict(), '%s_net_%s.pth' % (epoch, name))
"""

TRAIN = """import types
import torch
from models.cut_model import CUTModel

model = CUTModel(types.SimpleNamespace(gpu_ids=[0]))
for step in range(4):
    model.optimize_parameters(torch.randn(8, 4).cuda())
    if step == 1:
        model.save_networks(step)
"""


def _project(folder: Path, cut: str) -> Path:
    files = {"models/__init__.py": "", "models/base_model.py": BASE, "models/cut_model.py": cut, "train.py": TRAIN}
    return write_project(folder, "cut", files)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_optimizers_of_networks_an_inherited_save_moves_to_the_cpu_and_back(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path, CUT)
    found = unfixed_findings(folder, ["train.py", "models/base_model.py", "models/cut_model.py"], target)
    stale = [(line, message) for rule, line, message in found["cut_model.py"] if rule == "XLA203"]
    assert [line for line, _ in stale] == [11, 12], found
    assert stale[0][1].startswith(
        "`self.optimizer_G` steps the parameters of `self.netG`, which the inherited `BaseModel.save_networks` ("
    ), stale
    assert (
        "models/base_model.py) may move off the XLA device and back (`getattr(self, 'net' + name)`, "
        "`net.module.cpu()` then `net.cuda(self.gpu_ids[0])`)"
    ) in stale[0][1], stale
    assert "`self.optimizer_D` steps the parameters of `self.netD`" in stale[1][1], stale
    assert not [f for f in found["base_model.py"] if f[0] == "XLA203"], found


def test_a_subclass_that_overrides_the_save_gets_no_finding(tmp_path: Path) -> None:
    folder = _project(tmp_path, CUT + OVERRIDING)
    found = unfixed_findings(folder, ["train.py", "models/base_model.py", "models/cut_model.py"], "2.9")
    assert not [f for f in found["cut_model.py"] if f[0] == "XLA203"], found
