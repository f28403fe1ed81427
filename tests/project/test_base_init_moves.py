"""A model and its optimizer handed to a trainer class of another module whose ``__init__`` hands
them on to its base's (``super().__init__(opt, model, optimizer=optimizer)``, or
``BaseTrainer.__init__(self, opt, model)``), the base in a third module wrapping the model
(``ModelWithLoss(model, loss)``) and a method of the base moving it later
(``trainer.set_device(device)``): the optimizer, built before, holds the CPU parameters the move
replaces (XLA203 at the optimizer; no XLA112 saying that nothing moves the model, which a module the
run may not convert builds), in a whole run and when the script is converted alone, the class named
directly or looked up in a dict of the project (``train_factory[task]``); converted alone, the call of
the trainer's ``train``, which runs the loop through ``self.run_epoch(...)``, gets XLA003.  An
optimizer built after the move gives nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

BASE = """import torch


class ModelWithLoss(torch.nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, x, y):
        return self.loss(self.model(x), y)


class BaseTrainer:
    def __init__(self, opt, model, optimizer=None):
        self.opt = opt
        self.optimizer = optimizer
        self.model_with_loss = ModelWithLoss(model, torch.nn.MSELoss())

    def set_device(self, device):
        self.model_with_loss = self.model_with_loss.to(device)

    def run_epoch(self, phase, loader):
        for x, y in loader:
            loss = self.model_with_loss(x.to(self.opt.device), y.to(self.opt.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def train(self, loader):
        return self.run_epoch("train", loader)
"""

MODELS = """import torch


def create_model(width):
    return torch.nn.Linear(width, 1)
"""

SUPER = """from trains.base_trainer import BaseTrainer


class MotTrainer(BaseTrainer):
    def __init__(self, opt, model, optimizer=None):
        super(MotTrainer, self).__init__(opt, model, optimizer=optimizer)
"""

# The base's ``__init__`` named, ``self`` handed first (the alias of ``super()``).
EXPLICIT = """from trains import base_trainer as bt


class MotTrainer(bt.BaseTrainer):
    def __init__(self, opt, model, optimizer=None):
        bt.BaseTrainer.__init__(self, opt, model, optimizer)
"""

FACTORY = """from trains.mot import MotTrainer

train_factory = {"mot": MotTrainer}
"""

TRAIN = """import torch

from models import create_model
from trains.train_factory import train_factory


def main(opt, loader):
    opt.device = torch.device("cuda")
    model = create_model(4)
    optimizer = torch.optim.Adam(model.parameters(), opt.lr)
    Trainer = train_factory[opt.task]
    trainer = Trainer(opt, model, optimizer)
    trainer.set_device(opt.device)
    trainer.train(loader)
"""

# The optimizer built after the move: it holds the moved parameters.
TRAIN_AFTER = """import torch

from trains.mot import MotTrainer


def main(opt, loader):
    opt.device = torch.device("cuda")
    model = torch.nn.Linear(4, 1)
    trainer = MotTrainer(opt, model, None)
    trainer.set_device(opt.device)
    trainer.optimizer = torch.optim.Adam(model.parameters(), opt.lr)
    trainer.train(loader)
"""


def _project(folder: Path, subclass: str, train: str) -> Path:
    return write_project(
        folder,
        "trainers",
        {
            "trains/__init__.py": "",
            "trains/base_trainer.py": BASE,
            "trains/mot.py": subclass,
            "trains/train_factory.py": FACTORY,
            "models.py": MODELS,
            "train.py": train,
        },
    )


ALL = ["train.py", "models.py", "trains/base_trainer.py", "trains/mot.py", "trains/train_factory.py"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("subclass", [SUPER, EXPLICIT], ids=["super", "named-base"])
@pytest.mark.parametrize("names", [ALL, ["train.py"]], ids=["whole", "single"])
def test_an_optimizer_handed_on_to_a_base_that_moves_the_model_later_is_stale(
    tmp_path: Path, target: str, subclass: str, names: list[str]
) -> None:
    folder = _project(tmp_path, subclass, TRAIN)
    found = unfixed_findings(folder, names, target)["train.py"]
    stale = [(line, text) for rule, line, text in found if rule == "XLA203"]
    assert stale and stale[0][0] == 10, found
    assert "trains/base_trainer.py: `self.model_with_loss.to(device)`)" in stale[0][1], stale
    # (the model comes from a module this run may not convert, and the trainer moves it: no XLA112 says
    # that nothing moves it)
    assert not [f for f in found if f[0] == "XLA112" and f[1] == 9], found
    if names == ["train.py"]:
        # the trainer's ``train`` runs the loop through ``self.run_epoch``: XLA003 names it at the call
        assert any(
            rule == "XLA003" and line == 14 and "`trainer.train` runs a training loop in" in text
            for rule, line, text in found
        ), found


@pytest.mark.parametrize("names", [ALL, ["train.py"]], ids=["whole", "single"])
def test_an_optimizer_built_after_the_move_is_not_stale(tmp_path: Path, names: list[str]) -> None:
    folder = _project(tmp_path, SUPER, TRAIN_AFTER)
    found = unfixed_findings(folder, names, "2.9")["train.py"]
    assert not [f for f in found if f[0] == "XLA203"], found
