"""XLA203's cases for optimizers built over a module class's own parameters by its ``__init__``
and moved by ``__init__`` itself: built through a method of the class or of a base
(``self.compile(lr)``) or a helper handed ``self.parameters()``, then moved directly or through a
method (``self.model_to_device()``): the move replaces the parameters the optimizer holds; and the
``__init__`` methods that move first, build again after the move, or hold a module moved first."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A model class whose ``__init__`` calls a method of its base that builds the optimizer over the
# instance's parameters, then one that moves the instance to the device it chose (a CTR library's
# ``compile()`` and ``model_to_device()``).
INIT_METHODS = """
import torch
from torch import nn


class BaseModel(nn.Module):
    def __init__(self, gpu):
        super().__init__()
        self.device = torch.device(f"cuda:{gpu}" if gpu >= 0 else "cpu")

    def compile(self, lr):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def model_to_device(self):
        self.to(device=self.device)

    def fit(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            loss = (self(x.to(self.device)) - y.to(self.device)).pow(2).mean()
            loss.backward()
            self.optimizer.step()


class Net(BaseModel):
    def __init__(self, gpu, lr):
        super().__init__(gpu)
        self.fc = nn.Linear(4, 1)
        self.compile(lr)
        self.model_to_device()

    def forward(self, x):
        return self.fc(x)
"""

INIT_METHODS_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class BaseModel(nn.Module):
    def __init__(self, gpu):
        super().__init__()
        self.device = torch.device("xla" if gpu >= 0 else "cpu")

    def compile(self, lr):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def model_to_device(self):
        self.to(device=self.device)

    def fit(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            loss = (self(x.to(self.device)) - y.to(self.device)).pow(2).mean()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            torch_xla.sync()


class Net(BaseModel):
    def __init__(self, gpu, lr):
        super().__init__(gpu)
        self.fc = nn.Linear(4, 1)
        self.compile(lr)
        self.model_to_device()

    def forward(self, x):
        return self.fc(x)
"""


# An optimizer built by a helper handed ``self.parameters()``, then ``self.cuda()``; and one built
# by a method of the class, then a method that moves the instance.
BUILDERS_IN_INIT = """
from torch import nn, optim as O


def make_optimizer(params, lr):
    return O.SGD(params, lr=lr)


class Wrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.opt = make_optimizer(self.parameters(), 0.1)
        self.cuda()

    def forward(self, x):
        return self.fc(x)


class Trainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.build()
        self.place()

    def build(self):
        self.optim = O.Adam(self.fc.parameters())

    def place(self):
        self.cuda()

    def step(self, x):
        self.optim.zero_grad()
        self.fc(x.cuda()).sum().backward()
        self.optim.step()
"""

BUILDERS_IN_INIT_PORTED = """
from torch import nn, optim as O
import torch_xla
import torch_xla.core.xla_model as xm


def make_optimizer(params, lr):
    return O.SGD(params, lr=lr)


class Wrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.opt = make_optimizer(self.parameters(), 0.1)
        self.to(torch_xla.device())

    def forward(self, x):
        return self.fc(x)


class Trainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.build()
        self.place()

    def build(self):
        self.optim = O.Adam(self.fc.parameters())

    def place(self):
        self.to(torch_xla.device())

    def step(self, x):
        self.optim.zero_grad()
        self.fc(x.to(torch_xla.device())).sum().backward()
        xm.optimizer_step(self.optim)
"""


# Moved by a method before the optimizer is built, built again after the move, and an optimizer
# over a module handed in that the caller moved first.
INIT_METHODS_THAT_STRAND_NOTHING = """
import torch
from torch import nn


def make_optimizer(params, lr):
    return torch.optim.SGD(params, lr=lr)


class Base(nn.Module):
    def compile(self, lr):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def model_to_device(self):
        self.cuda()


class MovedFirst(Base):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.model_to_device()
        self.compile(lr)


class Rebuilt(Base):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.compile(lr)
        self.model_to_device()
        self.compile(lr)


class Handed(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = make_optimizer(self.net.parameters(), 0.1)


def fit(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        (model(x.cuda()) - y.cuda()).pow(2).mean().backward()
        optimizer.step()


def main(loader):
    first = MovedFirst(0.1)
    fit(first.fc, first.optimizer, loader)
    rebuilt = Rebuilt(0.1)
    rebuilt.cuda()
    fit(rebuilt.fc, rebuilt.optimizer, loader)
    net = nn.Linear(4, 1).cuda()
    handed = Handed(net)
    handed.cuda()
    fit(net, handed.opt, loader)
"""

INIT_METHODS_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def make_optimizer(params, lr):
    return torch.optim.SGD(params, lr=lr)


class Base(nn.Module):
    def compile(self, lr):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def model_to_device(self):
        self.to(torch_xla.device())


class MovedFirst(Base):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.model_to_device()
        self.compile(lr)


class Rebuilt(Base):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.compile(lr)
        self.model_to_device()
        self.compile(lr)


class Handed(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = make_optimizer(self.net.parameters(), 0.1)


def fit(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        (model(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean().backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()


def main(loader):
    first = MovedFirst(0.1)
    fit(first.fc, first.optimizer, loader)
    rebuilt = Rebuilt(0.1)
    rebuilt.to(torch_xla.device())
    fit(rebuilt.fc, rebuilt.optimizer, loader)
    net = nn.Linear(4, 1).to(torch_xla.device())
    handed = Handed(net)
    handed.to(torch_xla.device())
    fit(net, handed.opt, loader)
"""


def init_moved_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            INIT_METHODS_THAT_STRAND_NOTHING,
            INIT_METHODS_THAT_STRAND_NOTHING_PORTED,
            note="init-methods-move-first-build-again-or-hold-a-module-moved-first",
        ),
    )


def init_moved_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            INIT_METHODS,
            INIT_METHODS_PORTED,
            note="init-builds-through-a-base-method-then-a-base-method-moves",
            findings=(
                Expected(
                    32,
                    9,
                    "`self.model_to_device()` moves the `Net` instance (`self.to(device=self.device)` in "
                    "`BaseModel.model_to_device`) to a device that may be the XLA device after `Net.__init__` built "
                    "`self.optimizer` (by `self.compile(lr)` in `BaseModel.compile`)",
                ),
            ),
        ),
        invalid(
            BUILDERS_IN_INIT,
            BUILDERS_IN_INIT_PORTED,
            alias=True,
            note="init-builds-through-a-helper-or-a-method-then-moves",
            findings=(
                Expected(
                    15, 9, "`self.cuda()` moves the `Wrapped` instance to the XLA device after `Wrapped.__init__` built"
                ),
                Expected(
                    26,
                    9,
                    "`self.place()` moves the `Trainer` instance (`self.cuda()` in `Trainer.place`) to the XLA device "
                    "after `Trainer.__init__` built `self.optim` (by `self.build()` in `Trainer.build`)",
                ),
            ),
        ),
    )
