"""A model class of one module whose optimizers a method other than ``__init__`` builds
(pix2pixHD's ``initialize``: ``params = list(self.netG.parameters())``, then ``Adam(params)``)
and whose ``save`` hands each network to a save helper inherited from a base class of another
module, which moves it to the CPU and back; the steps run in a third module.  On XLA both moves
replace the network's Parameter objects and the optimizer keeps stepping the old ones: XLA203
reports the call in ``save``.  A base whose helper saves the state dict without moving gets
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

BASE = """\
import torch


class BaseModel:
    def save_network(self, network, label, gpu_ids):
        torch.save(network.cpu().state_dict(), f"{label}.pth")
        if len(gpu_ids) and torch.cuda.is_available():
            network.cuda()
"""
BASE_STATE_DICT = """\
import torch


class BaseModel:
    def save_network(self, network, label, gpu_ids):
        torch.save(network.state_dict(), f"{label}.pth")
"""
MODEL = """\
import torch
from torch import nn
from base import BaseModel


class GanModel(BaseModel):
    def initialize(self, gpu_ids):
        self.gpu_ids = gpu_ids
        self.netG = nn.Linear(4, 4).cuda()
        self.netD = nn.Linear(4, 1).cuda()
        params = list(self.netG.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-3)

    def save(self, label):
        self.save_network(self.netG, "G" + label, self.gpu_ids)
        self.save_network(self.netD, "D" + label, self.gpu_ids)
"""
TRAIN = """\
import torch
from model import GanModel

model = GanModel()
model.initialize([0])
optimizer_G, optimizer_D = model.optimizer_G, model.optimizer_D
for step, x in enumerate(loader):
    x = x.cuda()
    loss_G = model.netD(model.netG(x)).mean()
    optimizer_G.zero_grad()
    loss_G.backward()
    optimizer_G.step()
    loss_D = model.netD(x).mean()
    optimizer_D.zero_grad()
    loss_D.backward()
    optimizer_D.step()
    if step % 100 == 0:
        model.save("latest")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_an_inherited_helper_of_another_module_that_saves_on_the_cpu_and_moves_back_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "gan", {"base.py": BASE, "model.py": MODEL, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, ["base.py", "model.py", "train.py"], target)
    assert found["base.py"] == [] and found["train.py"] == []
    assert [(rule, line) for rule, line, _ in found["model.py"]] == [("XLA203", 16), ("XLA203", 17)]
    first, second = (message for _, _, message in found["model.py"])
    assert first.startswith(
        '`self.save_network(self.netG, "G" + label, self.gpu_ids)` moves `self.netG`, whose parameters '
        "`self.optimizer_G` steps, off the XLA device"
    )
    assert "`GanModel.save_network` (base.py) moves it back" in first
    assert "`self.netD`, whose parameters `self.optimizer_D` steps" in second


@pytest.mark.parametrize("target", TARGETS)
def test_an_inherited_helper_that_saves_the_state_dict_without_moving_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    files = {"base.py": BASE_STATE_DICT, "model.py": MODEL, "train.py": TRAIN}
    monkeypatch.chdir(write_project(tmp_path, "gan", files))
    found = unfixed_findings(tmp_path, list(files), target)
    assert found == {"base.py": [], "model.py": [], "train.py": []}
