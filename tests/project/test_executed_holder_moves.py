"""Executed: two Accelerate projects whose optimizer is built before the model moves, on torch_xla
2.9 (CPU) with accelerate.  A train-state holder whose ``to`` moves every module it holds through a
loop over ``self.__dict__.items()`` (U-ViT's ``TrainState``), and a trainer that builds one optimizer
per member of a model's ``unets`` in a loop, then moves the model to the accelerator's device before
``accelerator.prepare`` (imagen-pytorch's ``ImagenTrainer``).  On XLA each move makes new Parameter
objects, and ``prepare`` maps the optimizer's parameters only from the model's as it finds them
(already moved): the optimizer steps CPU copies and the model never changes, as XLA203 says.  The
port that builds the optimizer after the holder's move, and the trainer that leaves the move to
``prepare``, get no XLA203 and train on XLA."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import convert_folder, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

UTILS = """\
import torch
import torch.nn as nn


class TrainState:
    def __init__(self, optimizer, step, nnet=None):
        self.optimizer = optimizer
        self.step = step
        self.nnet = nnet

    def to(self, device):
        for key, val in self.__dict__.items():
            if isinstance(val, nn.Module):
                val.to(device)


def initialize_train_state(device):
    nnet = nn.Linear(4, 1)
{build}
    return train_state
"""
# The optimizer built before the holder moves its modules: the shape XLA203 reports.
OPTIMIZER_FIRST = """\
    optimizer = torch.optim.SGD(nnet.parameters(), lr=0.1)
    train_state = TrainState(optimizer=optimizer, step=0, nnet=nnet)
    train_state.to(device)"""
MOVED_FIRST = """\
    train_state = TrainState(optimizer=None, step=0, nnet=nnet)
    train_state.to(device)
    train_state.optimizer = torch.optim.SGD(train_state.nnet.parameters(), lr=0.1)"""

TRAINER = """\
import torch
import torch.nn as nn
from accelerate import Accelerator


class Imagen(nn.Module):
    def __init__(self):
        super().__init__()
        self.unets = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])


class ImagenTrainer(nn.Module):
    def __init__(self, imagen, lr=(0.1, 0.1)):
        super().__init__()
        self.accelerator = Accelerator()
        self.imagen = imagen
        for ind, (unet, unet_lr) in enumerate(zip(self.imagen.unets, lr)):
            optimizer = torch.optim.SGD(unet.parameters(), lr=unet_lr)
            setattr(self, f"optim{{ind}}", optimizer)
{move}

    @property
    def device(self):
        return self.accelerator.device

    def wrap_unet(self, index):
        unet = self.imagen.unets[index]
        optimizer = getattr(self, f"optim{{index}}")
        self.unet_being_trained, optimizer = self.accelerator.prepare(unet, optimizer)
        setattr(self, f"optim{{index}}", optimizer)

    def train_step(self, x, index=0):
        optimizer = getattr(self, f"optim{{index}}")
        optimizer.zero_grad()
        self.accelerator.backward(self.unet_being_trained(x.to(self.device)).pow(2).mean())
        optimizer.step()
"""
MOVED_BEFORE_PREPARE = "        self.imagen.to(self.device)"
PREPARE_MOVES = "        self.imagen.train()"

MAIN = """\
import torch
import torch_xla
from accelerate import Accelerator

import trainer
import utils


def main():
    torch.manual_seed(0)
    accelerator = Accelerator()
    state = utils.initialize_train_state(accelerator.device)
    nnet, optimizer = accelerator.prepare(state.nnet, state.optimizer)
    before = nnet.weight.detach().cpu().clone()
    for step in range(3):
        optimizer.zero_grad()
        accelerator.backward(nnet(torch.randn(8, 4).to(accelerator.device)).pow(2).mean())
        optimizer.step()
        torch_xla.sync()
    changed = not torch.equal(before, nnet.weight.detach().cpu())
    print(f"holder {nnet.weight.device.type} changed {changed}")

    imagen_trainer = trainer.ImagenTrainer(trainer.Imagen())
    imagen_trainer.wrap_unet(0)
    unet = imagen_trainer.unet_being_trained
    before = unet.weight.detach().cpu().clone()
    for step in range(3):
        imagen_trainer.train_step(torch.randn(8, 4))
        torch_xla.sync()
    changed = not torch.equal(before, unet.weight.detach().cpu())
    print(f"imagen {unet.weight.device.type} changed {changed}")


if __name__ == "__main__":
    main()
"""


def _project(folder: Path, build: str, move: str) -> list[str]:
    """The project written and converted; its XLA203 findings (file:line: message)."""
    files = {"utils.py": UTILS.format(build=build), "trainer.py": TRAINER.format(move=move), "main.py": MAIN}
    write_project(folder, "holders", files)
    job = Job("check", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    findings = [f"{Path(r.path).name}:{f.line}: {f.message}" for r in reports for f in r.findings if f.rule == "XLA203"]
    convert_folder(folder)
    return findings


def test_optimizers_built_over_the_moved_modules_train_on_xla_with_no_xla203(tmp_path: Path) -> None:
    folder = tmp_path / "moved_first"
    assert _project(folder, MOVED_FIRST, PREPARE_MOVES) == []
    output = run_script(folder, "main.py").output
    assert "holder xla changed True" in output and "imagen xla changed True" in output, output


def test_a_move_after_the_optimizer_trains_nothing_prepare_or_not_as_xla203_says(tmp_path: Path) -> None:
    """The negative control: the holder's ``__dict__`` loop and the trainer's move before
    ``prepare`` leave each optimizer with the CPU parameters."""
    folder = tmp_path / "optimizer_first"
    findings = _project(folder, OPTIMIZER_FIRST, MOVED_BEFORE_PREPARE)
    assert [f.split(" the optimizer is built")[0] for f in findings] == ["utils.py:19:", "trainer.py:18:"], findings
    assert "`val.to(device)` in `TrainState.to`" in findings[0], findings
    assert "Accelerate's `prepare` does not repair it" in findings[1], findings
    output = run_script(folder, "main.py").output
    assert "holder xla changed False" in output and "imagen xla changed False" in output, output
