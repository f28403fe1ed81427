"""XLA203's cases for a module moved through a holder's method or a loop: a train-state holder
whose ``to`` moves every module it holds through a loop over ``self.__dict__`` (``vars(self)``),
after the optimizer was built over one of them (U-ViT's ``TrainState``), and an Accelerate
trainer that builds one optimizer per member of a model's container in a loop, then moves the
model before ``accelerator.prepare`` (imagen-pytorch's ``ImagenTrainer``): on XLA each move
makes new Parameter objects, and ``prepare`` maps the optimizer's parameters only from the
model's as it finds them, already moved."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# The holder's ``to`` moves each module attribute through ``self.__dict__.items()``; the optimizer
# was built over ``nnet`` before, and the holder is built with keywords.
HOLDER_DICT_ITEMS = """
import torch
import torch.nn as nn


class TrainState:
    def __init__(self, optimizer, step, nnet=None, nnet_ema=None):
        self.optimizer = optimizer
        self.step = step
        self.nnet = nnet
        self.nnet_ema = nnet_ema

    def to(self, device):
        for key, val in self.__dict__.items():
            if isinstance(val, nn.Module):
                val.to(device)


def initialize_train_state(device):
    nnet = nn.Linear(4, 1)
    nnet_ema = nn.Linear(4, 1)
    optimizer = torch.optim.AdamW(nnet.parameters(), lr=1e-3)
    train_state = TrainState(optimizer=optimizer, step=0, nnet=nnet, nnet_ema=nnet_ema)
    train_state.to(device)
    return train_state
"""


# A dataclass holder (its fields are its attributes), ``vars(self).values()``, and the optimizer
# built in the holder's arguments (they run before the holder's methods).
DATACLASS_HOLDER_VARS = """
from dataclasses import dataclass

import torch
from torch import nn as tnn


@dataclass
class TrainState:
    optimizer: torch.optim.Optimizer
    nnet: tnn.Module

    def to(self, device):
        for val in vars(self).values():
            if isinstance(val, tnn.Module):
                val.to(device)


def initialize_train_state(device):
    nnet = tnn.Linear(4, 1)
    state = TrainState(torch.optim.AdamW(nnet.parameters(), lr=1e-3), nnet)
    state.to(device)
    return state
"""


# The optimizer built by a helper from a list the parameters were collected into.
HOLDER_WITH_OPTIMIZER_HELPER = """
import torch
import torch.nn as nn


def get_optimizer(params, name, **kwargs):
    if name == "adamw":
        return torch.optim.AdamW(params, **kwargs)
    raise NotImplementedError(name)


class TrainState:
    def __init__(self, optimizer, nnet):
        self.optimizer = optimizer
        self.nnet = nnet

    def to(self, device):
        for key, val in self.__dict__.items():
            if isinstance(val, nn.Module):
                val.to(device)


def initialize_train_state(config, device):
    params = []
    nnet = nn.Linear(4, 1)
    params += nnet.parameters()
    optimizer = get_optimizer(params, **config.optimizer)
    train_state = TrainState(optimizer=optimizer, nnet=nnet)
    train_state.to(device)
    return train_state
"""


# One optimizer per member of ``self.imagen.unets`` (through enumerate and zip), then the model
# moved to the accelerator's device before ``prepare``.
ACCELERATE_MOVE_BEFORE_PREPARE = """
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.optim import Adam


class ImagenTrainer(nn.Module):
    def __init__(self, imagen, lr=(1e-4,)):
        super().__init__()
        self.accelerator = Accelerator()
        self.imagen = imagen
        for ind, (unet, unet_lr) in enumerate(zip(self.imagen.unets, lr)):
            optimizer = Adam(unet.parameters(), lr=unet_lr)
            setattr(self, f"optim{ind}", optimizer)
        self.imagen.to(self.device)

    @property
    def device(self):
        return self.accelerator.device

    def wrap_unet(self, index):
        unet = self.imagen.unets[index]
        optimizer = getattr(self, f"optim{index}")
        self.unet_being_trained, optimizer = self.accelerator.prepare(unet, optimizer)
        setattr(self, f"optim{index}", optimizer)

    def train_step(self, x, index=0):
        self.accelerator.backward(self.unet_being_trained(x).mean())
        getattr(self, f"optim{index}").step()
"""


# The holder moves its modules first, and the optimizer is built over the moved ones.
HOLDER_MOVED_FIRST = """
import torch
import torch.nn as nn


class TrainState:
    def __init__(self, optimizer, nnet):
        self.optimizer = optimizer
        self.nnet = nnet

    def to(self, device):
        for key, val in self.__dict__.items():
            if isinstance(val, nn.Module):
                val.to(device)


def initialize_train_state(device):
    nnet = nn.Linear(4, 1)
    train_state = TrainState(optimizer=None, nnet=nnet)
    train_state.to(device)
    train_state.optimizer = torch.optim.AdamW(train_state.nnet.parameters(), lr=1e-3)
    return train_state
"""


# No move before ``prepare``: Accelerate moves the model and remaps the optimizer's parameters.
ACCELERATE_PREPARE_MOVES = """
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.optim import Adam


class ImagenTrainer(nn.Module):
    def __init__(self, imagen, lr=(1e-4,)):
        super().__init__()
        self.accelerator = Accelerator()
        self.imagen = imagen
        for ind, (unet, unet_lr) in enumerate(zip(self.imagen.unets, lr)):
            optimizer = Adam(unet.parameters(), lr=unet_lr)
            setattr(self, f"optim{ind}", optimizer)

    def wrap_unet(self, index):
        unet = self.imagen.unets[index]
        optimizer = getattr(self, f"optim{index}")
        self.unet_being_trained, optimizer = self.accelerator.prepare(unet, optimizer)
        setattr(self, f"optim{index}", optimizer)

    def train_step(self, x, index=0):
        self.accelerator.backward(self.unet_being_trained(x).mean())
        getattr(self, f"optim{index}").step()
"""


# The ordinary Accelerate script: the optimizer, then ``prepare`` moves the model.
ACCELERATE_PLAIN = """
import torch
import torch.nn as nn
from accelerate import Accelerator

accelerator = Accelerator()
model = nn.Linear(4, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for x, y in loader:
    optimizer.zero_grad()
    accelerator.backward(((model(x) - y) ** 2).mean())
    optimizer.step()
"""


# The model is moved before the optimizers over its members are built.
MEMBERS_AFTER_THE_MOVE = """
import torch
import torch.nn as nn


class Trainer(nn.Module):
    def __init__(self, imagen, device, lr=(1e-4,)):
        super().__init__()
        self.imagen = imagen
        self.imagen.to(device)
        for ind, (unet, unet_lr) in enumerate(zip(self.imagen.unets, lr)):
            setattr(self, f"optim{ind}", torch.optim.Adam(unet.parameters(), lr=unet_lr))
"""


_PREPARE = "Accelerate's `prepare` does not repair it"


def holder_move_valid() -> tuple[Valid, ...]:
    return (
        valid(HOLDER_MOVED_FIRST, note="holder-moves-its-modules-before-the-optimizer"),
        valid(MEMBERS_AFTER_THE_MOVE, note="optimizers-over-members-built-after-the-model-moves"),
        valid(ACCELERATE_PREPARE_MOVES, note="accelerate-prepare-places-the-model-optimizers-over-members"),
        valid(ACCELERATE_PLAIN, note="accelerate-optimizer-then-prepare"),
    )


def holder_move_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            HOLDER_DICT_ITEMS,
            note="holder-moves-every-module-through-self-dict-items-after-the-optimizer",
            findings=(
                Expected(
                    21,
                    35,
                    "the optimizer is built while `nnet` is on the CPU, and `val.to(device)` in `TrainState.to` "
                    "moves the model later",
                ),
            ),
        ),
        invalid(
            DATACLASS_HOLDER_VARS,
            alias=True,
            note="dataclass-holder-moves-vars-values-after-an-optimizer-built-in-its-arguments",
            findings=(Expected(20, 42, "`val.to(device)` in `TrainState.to` moves the model later"),),
        ),
        invalid(
            HOLDER_WITH_OPTIMIZER_HELPER,
            note="holder-move-after-a-helper-built-the-optimizer-from-collected-parameters",
            findings=(Expected(25, 15, "`val.to(device)` in `TrainState.to` moves the model later"),),
        ),
        invalid(
            ACCELERATE_MOVE_BEFORE_PREPARE,
            note="accelerate-trainer-moves-the-model-after-optimizers-over-its-members-before-prepare",
            findings=(Expected(13, 30, f"so build the optimizer after the move ({_PREPARE}"),),
        ),
    )
