"""XLA203's cases for an instance of a class the tool cannot tell, looked up by its name
(``algorithm_class = get_algorithm_class(name)`` returning ``globals()[name]``): the classes
of the module it may be that build their optimizer over their own parameters in
``__init__`` (also by running their base's: ``class Mixup(ERM)``) are stranded by the move."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A class looked up in the module's globals, whose candidates build their optimizer in
# ``__init__`` (ERM) or inherit that ``__init__`` (Mixup), moved after it is built.
LOOKED_UP_AND_MOVED = """
import torch
from torch import nn


class ERM(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()


class Mixup(ERM):
    pass


def get_algorithm_class(name):
    return globals()[name]


algorithm_class = get_algorithm_class(args.algorithm)
algorithm = algorithm_class(1e-3)
algorithm.to("cuda")
for x in batches:
    algorithm.update(x.to("cuda"))
"""


LOOKED_UP_AND_MOVED_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class ERM(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        xm.optimizer_step(self.optimizer)


class Mixup(ERM):
    pass


def get_algorithm_class(name):
    return globals()[name]


algorithm_class = get_algorithm_class(args.algorithm)
algorithm = algorithm_class(1e-3)
algorithm.to("xla")
for x in batches:
    algorithm.update(x.to("xla"))
    torch_xla.sync()
"""


# The classes it may be build their optimizer lazily, after moving themselves, or take it
# from outside: the move strands nothing.
LOOKED_UP_NOTHING_STRANDED = """
import torch
from torch import nn


class Lazy(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.lr = lr
        self.optimizer = None

    def update(self, x):
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()


class MovedFirst(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.to("cuda")
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()


class Handed(nn.Module):
    def __init__(self, net, optimizer):
        super().__init__()
        self.net = net
        self.optimizer = optimizer

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        self.optimizer.step()


def get_algorithm_class(name):
    return globals()[name]


algorithm_class = get_algorithm_class(args.algorithm)
algorithm = algorithm_class(1e-3)
algorithm.to("cuda")
for x in batches:
    algorithm.update(x.to("cuda"))
"""


LOOKED_UP_NOTHING_STRANDED_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Lazy(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.lr = lr
        self.optimizer = None

    def update(self, x):
        if self.optimizer is None:
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        xm.optimizer_step(self.optimizer)


class MovedFirst(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.to("xla")
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        xm.optimizer_step(self.optimizer)


class Handed(nn.Module):
    def __init__(self, net, optimizer):
        super().__init__()
        self.net = net
        self.optimizer = optimizer

    def update(self, x):
        self.optimizer.zero_grad()
        self.net(x).sum().backward()
        xm.optimizer_step(self.optimizer)


def get_algorithm_class(name):
    return globals()[name]


algorithm_class = get_algorithm_class(args.algorithm)
algorithm = algorithm_class(1e-3)
algorithm.to("xla")
for x in batches:
    algorithm.update(x.to("xla"))
    torch_xla.sync()
"""


# Aliased imports, ``globals().get(name)``, ``super(Base, self).__init__()`` and a subclass
# whose ``__init__`` runs its base's.
LOOKED_UP_ALIASED = """
import torch.nn as tnn
from torch import optim as o


class Base(tnn.Module):
    def __init__(self):
        super(Base, self).__init__()
        self.net = tnn.Linear(4, 2)
        self.opt = o.SGD(self.parameters(), lr=0.1)

    def learn(self, x):
        self.opt.zero_grad()
        self.net(x).sum().backward()
        self.opt.step()


class Child(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", None)


def algorithm(name):
    return globals().get(name)


cls = algorithm(config["name"])
model = cls()
model.cuda()
for x in batches:
    model.learn(x.cuda())
"""


LOOKED_UP_ALIASED_PORTED = """
import torch.nn as tnn
from torch import optim as o
import torch_xla
import torch_xla.core.xla_model as xm


class Base(tnn.Module):
    def __init__(self):
        super(Base, self).__init__()
        self.net = tnn.Linear(4, 2)
        self.opt = o.SGD(self.parameters(), lr=0.1)

    def learn(self, x):
        self.opt.zero_grad()
        self.net(x).sum().backward()
        xm.optimizer_step(self.opt)


class Child(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", None)


def algorithm(name):
    return globals().get(name)


cls = algorithm(config["name"])
model = cls()
model.to(torch_xla.device())
for x in batches:
    model.learn(x.to(torch_xla.device()))
    torch_xla.sync()
"""


def looked_up_valid() -> tuple[Valid, ...]:
    return (
        valid(
            LOOKED_UP_NOTHING_STRANDED,
            LOOKED_UP_NOTHING_STRANDED_PORTED,
            note="looked-up-classes-build-lazily-after-moving-or-take-the-optimizer",
        ),
    )


def looked_up_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            LOOKED_UP_AND_MOVED,
            LOOKED_UP_AND_MOVED_PORTED,
            note="looked-up-by-name-in-globals-moved-after-init-built-the-optimizer",
            findings=(
                Expected(
                    29,
                    1,
                    '`algorithm.to("cuda")` moves `algorithm` to the XLA device after the `__init__` of `ERM` or '
                    "`Mixup`, classes that `algorithm_class` may be (looked up by name), built `self.optimizer`",
                ),
            ),
        ),
        invalid(
            LOOKED_UP_ALIASED,
            LOOKED_UP_ALIASED_PORTED,
            alias=True,
            note="looked-up-by-name-aliased-base-init-run-by-the-subclass",
            findings=(
                Expected(
                    31,
                    1,
                    "`model.cuda()` moves `model` to the XLA device after the `__init__` of `Base` or `Child`, "
                    "classes that `cls` may be (looked up by name), built `self.opt`",
                ),
            ),
        ),
    )
