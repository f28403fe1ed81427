"""XLA203's cases for optimizers built over a module class's own parameters, moved by the caller:
built by a submodule ``__init__`` builds that builds its own through a helper handed
``self.parameters()`` (``Optimizer("model", self.parameters(), lr)``), by a method the caller calls
(``model.compile(lr)``), or by a method of ``__init__`` over a module it was handed; then the caller
moves the instance (``Agent().cuda()``): the move replaces the parameters the optimizer holds; and
the callers that build again after the move or move first."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# ``__init__`` calls a method that builds the optimizer over a module it was handed: moved by the
# caller before the instance is built, or only with the instance.
HANDED_MODULE_MOVED_FIRST = """
import torch
from torch import nn


class Agent(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.compile(0.1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr)


def main(loader):
    net = nn.Linear(4, 1).cuda()
    agent = Agent(net).cuda()
    for x, y in loader:
        agent.optimizer.zero_grad()
        (agent.net(x.cuda()) - y.cuda()).pow(2).mean().backward()
        agent.optimizer.step()
"""

HANDED_MODULE_MOVED_FIRST_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Agent(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.compile(0.1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr)


def main(loader):
    net = nn.Linear(4, 1).to(torch_xla.device())
    agent = Agent(net).to(torch_xla.device())
    for x, y in loader:
        agent.optimizer.zero_grad()
        (agent.net(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean().backward()
        xm.optimizer_step(agent.optimizer)
        torch_xla.sync()
"""

HANDED_MODULE_MOVED_WITH_THE_INSTANCE = """
import torch
from torch import nn


class Agent(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.compile(0.1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr)


def main(loader):
    net = nn.Linear(4, 1)
    agent = Agent(net).cuda()
    for x, y in loader:
        agent.optimizer.zero_grad()
        (agent.net(x.cuda()) - y.cuda()).pow(2).mean().backward()
        agent.optimizer.step()
"""

HANDED_MODULE_MOVED_WITH_THE_INSTANCE_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Agent(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.compile(0.1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr)


def main(loader):
    net = nn.Linear(4, 1)
    agent = Agent(net).to(torch_xla.device())
    for x, y in loader:
        agent.optimizer.zero_grad()
        (agent.net(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean().backward()
        xm.optimizer_step(agent.optimizer)
        torch_xla.sync()
"""

# A world model whose optimizer is a project class handed ``self.parameters()``, built by an agent
# that the caller moves (``Agent().cuda()``); and a model the caller gives an optimizer through a
# method (``model.compile(lr)``) before a method moves it.
MOVED_BY_THE_CALLER = """
import torch
from torch import nn


class Optimizer:
    def __init__(self, name, parameters, lr):
        self._opt = torch.optim.Adam(parameters, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()


class World(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self._model_opt = Optimizer("model", self.parameters(), 0.1)

    def forward(self, x):
        return self.fc(x)


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self._wm = World()

    def train_step(self, x, y):
        self._wm._model_opt((self._wm(x) - y).pow(2).mean())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def model_to_device(self):
        self.cuda()


def main(loader):
    agent = Agent().cuda()
    model = Net()
    model.compile(0.1)
    model.model_to_device()
    for x, y in loader:
        agent.train_step(x.cuda(), y.cuda())
        model.optimizer.zero_grad()
        (model.fc(x.cuda()) - y.cuda()).pow(2).mean().backward()
        model.optimizer.step()
"""

MOVED_BY_THE_CALLER_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Optimizer:
    def __init__(self, name, parameters, lr):
        self._opt = torch.optim.Adam(parameters, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self._opt)


class World(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self._model_opt = Optimizer("model", self.parameters(), 0.1)

    def forward(self, x):
        return self.fc(x)


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self._wm = World()

    def train_step(self, x, y):
        self._wm._model_opt((self._wm(x) - y).pow(2).mean())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def model_to_device(self):
        self.to(torch_xla.device())


def main(loader):
    agent = Agent().to(torch_xla.device())
    model = Net()
    model.compile(0.1)
    model.model_to_device()
    for x, y in loader:
        agent.train_step(x.to(torch_xla.device()), y.to(torch_xla.device()))
        model.optimizer.zero_grad()
        (model.fc(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean().backward()
        xm.optimizer_step(model.optimizer)
        torch_xla.sync()
"""


# The caller builds the optimizer again after the move (by hand, or through the method), or moves
# the instance before it calls the method that builds it.
CALLERS_THAT_STRAND_NOTHING = """
import torch
from torch import nn


class Optimizer:
    def __init__(self, parameters, lr):
        self._opt = torch.optim.Adam(parameters, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()


class World(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.opt = Optimizer(self.parameters(), 0.1)


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.world = World()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)


def main(loader):
    agent = Agent().cuda()
    agent.world.opt = Optimizer(agent.world.parameters(), 0.1)
    first = Net()
    first.cuda()
    first.compile(0.1)
    again = Net()
    again.compile(0.1)
    again.cuda()
    again.compile(0.1)
    by_hand = Net()
    by_hand.compile(0.1)
    by_hand.cuda()
    by_hand.optimizer = torch.optim.SGD(by_hand.parameters(), lr=0.1)
    for x, y in loader:
        agent.world.opt((agent.world.fc(x.cuda()) - y.cuda()).pow(2).mean())
        for model in (first, again, by_hand):
            model.optimizer.zero_grad()
            (model.fc(x.cuda()) - y.cuda()).pow(2).mean().backward()
            model.optimizer.step()
"""

CALLERS_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Optimizer:
    def __init__(self, parameters, lr):
        self._opt = torch.optim.Adam(parameters, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self._opt)


class World(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.opt = Optimizer(self.parameters(), 0.1)


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.world = World()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def compile(self, lr):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)


def main(loader):
    agent = Agent().to(torch_xla.device())
    agent.world.opt = Optimizer(agent.world.parameters(), 0.1)
    first = Net()
    first.to(torch_xla.device())
    first.compile(0.1)
    again = Net()
    again.compile(0.1)
    again.to(torch_xla.device())
    again.compile(0.1)
    by_hand = Net()
    by_hand.compile(0.1)
    by_hand.to(torch_xla.device())
    by_hand.optimizer = torch.optim.SGD(by_hand.parameters(), lr=0.1)
    for x, y in loader:
        agent.world.opt((agent.world.fc(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean())
        for model in (first, again, by_hand):
            model.optimizer.zero_grad()
            (model.fc(x.to(torch_xla.device())) - y.to(torch_xla.device())).pow(2).mean().backward()
            xm.optimizer_step(model.optimizer)
            torch_xla.sync()
        torch_xla.sync()
"""


def caller_moved_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            HANDED_MODULE_MOVED_FIRST,
            HANDED_MODULE_MOVED_FIRST_PORTED,
            note="a-method-of-init-builds-over-a-handed-module-the-caller-moved-first",
        ),
        valid(
            CALLERS_THAT_STRAND_NOTHING,
            CALLERS_THAT_STRAND_NOTHING_PORTED,
            note="callers-build-the-optimizer-again-after-the-move-or-move-first",
        ),
    )


def caller_moved_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            HANDED_MODULE_MOVED_WITH_THE_INSTANCE,
            HANDED_MODULE_MOVED_WITH_THE_INSTANCE_PORTED,
            note="a-method-of-init-builds-over-a-handed-module-moved-with-the-instance",
            findings=(
                Expected(
                    19,
                    13,
                    "`Agent(net).cuda()` moves `agent` to the XLA device after `Agent.__init__` built `self.optimizer`",
                ),
            ),
        ),
        invalid(
            MOVED_BY_THE_CALLER,
            MOVED_BY_THE_CALLER_PORTED,
            note="a-submodule-with-a-helper-optimizer-or-a-method-built-optimizer-moved-by-the-caller",
            findings=(
                Expected(
                    49,
                    13,
                    "`Agent().cuda()` moves `agent` to the XLA device after `Agent.__init__` built "
                    "`self._wm._model_opt`",
                ),
                Expected(
                    52,
                    5,
                    "`model.model_to_device()` moves `model` to the XLA device through `self.cuda()` in "
                    "`Net.model_to_device` after `model.compile(0.1)` in `Net.compile` built `self.optimizer`",
                ),
            ),
        ),
    )
