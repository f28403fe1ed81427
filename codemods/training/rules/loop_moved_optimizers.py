"""XLA203's and XLA213's cases for modules moved through a loop variable after an optimizer was built over
them: ``for m in self.modules: m.to(device)`` with a property returning ``[self.policy, self.qf]`` (an RL
agent's ``torch_to_device``), a literal tuple (``for net in (policy, qf): net.cuda()``), a method that builds
its list and appends to it; a loop over a value of the instance the tool cannot read (XLA213); and loops that
move other modules, or tensors of a loader, which strand nothing."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A plain class over handed-in modules; a method moves them through a loop over a property that lists them,
# to a device the caller hands in (that may be the CPU: no fix).
PROPERTY_LOOP = """
import torch
from torch import nn


class Agent(object):
    def __init__(self, policy, qf):
        self.policy, self.qf = policy, qf
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def train(self, x):
        loss = self.policy(x).sum() + self.qf(x).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def to_device(self, device):
        for m in self.modules:
            m.to(device)

    @property
    def modules(self):
        return [self.policy, self.qf]


def main(loader):
    agent = Agent(nn.Linear(3, 1), nn.Linear(3, 1))
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.cuda())
"""

PROPERTY_LOOP_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, qf):
        self.policy, self.qf = policy, qf
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def train(self, x):
        loss = self.policy(x).sum() + self.qf(x).sum()
        self.opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.opt)

    def to_device(self, device):
        for m in self.modules:
            m.to(device)

    @property
    def modules(self):
        return [self.policy, self.qf]


def main(loader):
    agent = Agent(nn.Linear(3, 1), nn.Linear(3, 1))
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.to(torch_xla.device()))
        torch_xla.sync()
"""

PROPERTY_LOOP_SAGEMAKER = """
import torch
from torch import nn
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, qf):
        self.policy, self.qf = policy, qf
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def train(self, x):
        loss = self.policy(x).sum() + self.qf(x).sum()
        self.opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.opt)

    def to_device(self, device):
        for m in self.modules:
            m.to(device)

    @property
    def modules(self):
        return [self.policy, self.qf]


def main(loader):
    agent = Agent(nn.Linear(3, 1), nn.Linear(3, 1))
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.to(xm.xla_device()))
        xm.mark_step()
"""

# A literal tuple of the function's modules, moved in a loop after the optimizer.
TUPLE_LOOP = """
import torch
from torch import nn


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    for net in (policy, qf):
        net.cuda()
    for x in loader:
        loss = policy(x.cuda()).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

TUPLE_LOOP_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(policy.to(torch_xla.device()).parameters(), lr=0.1)
    for net in (policy, qf):
        net.to(torch_xla.device())
    for x in loader:
        loss = policy(x.to(torch_xla.device())).sum()
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""

TUPLE_LOOP_SAGEMAKER = """
import torch
from torch import nn
import torch_xla.core.xla_model as xm


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(policy.to(xm.xla_device()).parameters(), lr=0.1)
    for net in (policy, qf):
        net.to(xm.xla_device())
    for x in loader:
        loss = policy(x.to(xm.xla_device())).sum()
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.mark_step()
"""

# A method that builds the list and appends to it, moved through it by another method (every move to XLA: fixed).
APPENDED_LIST = """
import torch.optim as O
from torch import nn


class Learner:
    def __init__(self, actor, critic, use_critic):
        self.actor = actor
        self.critic = critic
        self.use_critic = use_critic
        self.actor_opt = O.Adam(self.actor.parameters(), lr=1e-3)

    def networks(self):
        nets = [self.actor]
        if self.use_critic:
            nets.append(self.critic)
        return nets

    def place(self):
        for net in self.networks():
            net.cuda()

    def update(self, x):
        loss = self.actor(x).sum()
        self.actor_opt.zero_grad()
        loss.backward()
        self.actor_opt.step()


def main(loader):
    learner = Learner(nn.Linear(3, 1), nn.Linear(3, 1), True)
    learner.place()
    for x in loader:
        learner.update(x.cuda())
"""

APPENDED_LIST_PORTED = """
import torch.optim as O
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Learner:
    def __init__(self, actor, critic, use_critic):
        self.actor = actor
        self.critic = critic
        self.use_critic = use_critic
        self.actor_opt = O.Adam(self.actor.to(torch_xla.device()).parameters(), lr=1e-3)

    def networks(self):
        nets = [self.actor]
        if self.use_critic:
            nets.append(self.critic)
        return nets

    def place(self):
        for net in self.networks():
            net.to(torch_xla.device())

    def update(self, x):
        loss = self.actor(x).sum()
        self.actor_opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.actor_opt)


def main(loader):
    learner = Learner(nn.Linear(3, 1), nn.Linear(3, 1), True)
    learner.place()
    for x in loader:
        learner.update(x.to(torch_xla.device()))
        torch_xla.sync()
"""

APPENDED_LIST_SAGEMAKER = """
import torch.optim as O
from torch import nn
import torch_xla.core.xla_model as xm


class Learner:
    def __init__(self, actor, critic, use_critic):
        self.actor = actor
        self.critic = critic
        self.use_critic = use_critic
        self.actor_opt = O.Adam(self.actor.to(xm.xla_device()).parameters(), lr=1e-3)

    def networks(self):
        nets = [self.actor]
        if self.use_critic:
            nets.append(self.critic)
        return nets

    def place(self):
        for net in self.networks():
            net.to(xm.xla_device())

    def update(self, x):
        loss = self.actor(x).sum()
        self.actor_opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.actor_opt)


def main(loader):
    learner = Learner(nn.Linear(3, 1), nn.Linear(3, 1), True)
    learner.place()
    for x in loader:
        learner.update(x.to(xm.xla_device()))
        xm.mark_step()
"""

# A loop over a dict of the instance the tool cannot read: it may hold the optimizer's module.
UNREAD_VALUES = """
import torch
from torch import nn


class Agent(object):
    def __init__(self, policy, nets):
        self.policy = policy
        self.nets = nets
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.nets.values():
            m.to(device)

    def train(self, x):
        loss = self.policy(x).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def main(loader):
    policy = nn.Linear(3, 1)
    agent = Agent(policy, {"policy": policy})
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.cuda())
"""

UNREAD_VALUES_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, nets):
        self.policy = policy
        self.nets = nets
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.nets.values():
            m.to(device)

    def train(self, x):
        loss = self.policy(x).sum()
        self.opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.opt)


def main(loader):
    policy = nn.Linear(3, 1)
    agent = Agent(policy, {"policy": policy})
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.to(torch_xla.device()))
        torch_xla.sync()
"""

UNREAD_VALUES_SAGEMAKER = """
import torch
from torch import nn
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, nets):
        self.policy = policy
        self.nets = nets
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.nets.values():
            m.to(device)

    def train(self, x):
        loss = self.policy(x).sum()
        self.opt.zero_grad()
        loss.backward()
        xm.optimizer_step(self.opt)


def main(loader):
    policy = nn.Linear(3, 1)
    agent = Agent(policy, {"policy": policy})
    agent.to_device("cuda")
    for x in loader:
        agent.train(x.to(xm.xla_device()))
        xm.mark_step()
"""

# Loops that move other modules (a property without the optimizer's), or a loader's tensors (not in place),
# and an optimizer built after the loop's move.
OTHER_MODULES = """
import torch
from torch import nn


class Agent(object):
    def __init__(self, policy, qf, loader):
        self.policy, self.qf = policy, qf
        self.loader = loader
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.targets:
            m.to(device)
        for batch in self.loader:
            x = batch.to(device)
            loss = self.policy(x).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    @property
    def targets(self):
        return [self.qf]


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    for net in [policy, qf]:
        net.cuda()
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    agent = Agent(policy.cuda(), qf, loader)
    agent.to_device(torch.device("cuda"))
    for x in loader:
        loss = policy(x.cuda()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

OTHER_MODULES_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, qf, loader):
        self.policy, self.qf = policy, qf
        self.loader = loader
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.targets:
            m.to(device)
        for batch in self.loader:
            x = batch.to(device)
            loss = self.policy(x).sum()
            self.opt.zero_grad()
            loss.backward()
            xm.optimizer_step(self.opt)
            torch_xla.sync()

    @property
    def targets(self):
        return [self.qf]


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    for net in [policy, qf]:
        net.to(torch_xla.device())
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    agent = Agent(policy.to(torch_xla.device()), qf, loader)
    agent.to_device(torch_xla.device())
    for x in loader:
        loss = policy(x.to(torch_xla.device())).sum()
        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)
        torch_xla.sync()
"""

OTHER_MODULES_SAGEMAKER = """
import torch
from torch import nn
import torch_xla.core.xla_model as xm


class Agent(object):
    def __init__(self, policy, qf, loader):
        self.policy, self.qf = policy, qf
        self.loader = loader
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def to_device(self, device):
        for m in self.targets:
            m.to(device)
        for batch in self.loader:
            x = batch.to(device)
            loss = self.policy(x).sum()
            self.opt.zero_grad()
            loss.backward()
            xm.optimizer_step(self.opt)
            xm.mark_step()

    @property
    def targets(self):
        return [self.qf]


def main(loader):
    policy = nn.Linear(3, 1)
    qf = nn.Linear(3, 1)
    for net in [policy, qf]:
        net.to(xm.xla_device())
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    agent = Agent(policy.to(xm.xla_device()), qf, loader)
    agent.to_device(xm.xla_device())
    for x in loader:
        loss = policy(x.to(xm.xla_device())).sum()
        opt.zero_grad()
        loss.backward()
        xm.optimizer_step(opt)
        xm.mark_step()
"""

_LATER = "moves the model later"


def loop_moved_invalid() -> tuple[Invalid, ...]:
    """XLA203: each element of the list a loop moves is a module moved later."""
    return (
        invalid(
            PROPERTY_LOOP,
            PROPERTY_LOOP_PORTED,
            note="loop-over-a-property-listing-handed-in-modules",
            findings=(
                Expected(
                    10,
                    37,
                    "the optimizer is built while `policy`, handed in, may be on the CPU, and `m.to(device)` in "
                    f"`Agent.to_device` {_LATER} to a device that may be the CPU",
                ),
            ),
        ),
        invalid(
            PROPERTY_LOOP,
            PROPERTY_LOOP_SAGEMAKER,
            target="sagemaker",
            note="loop-over-a-property-listing-handed-in-modules-sagemaker",
            findings=(Expected(9, 37, f"and `m.to(device)` in `Agent.to_device` {_LATER}"),),
        ),
        invalid(
            TUPLE_LOOP,
            TUPLE_LOOP_PORTED,
            note="loop-over-a-literal-tuple",
            findings=(
                Expected(
                    10,
                    33,
                    f"the optimizer is built while `policy` is on the CPU and `net.cuda()` in `main` {_LATER}; "
                    "moving a module to XLA replaces its parameters, so move it first: "
                    "policy.to(torch_xla.device()).parameters()",
                ),
            ),
        ),
        invalid(
            TUPLE_LOOP,
            TUPLE_LOOP_SAGEMAKER,
            target="sagemaker",
            note="loop-over-a-literal-tuple-sagemaker",
            findings=(Expected(9, 33, "so move it first: policy.to(xm.xla_device()).parameters()"),),
        ),
        invalid(
            APPENDED_LIST,
            APPENDED_LIST_PORTED,
            alias=True,
            note="loop-over-a-method-appending-to-its-list-alias",
            findings=(
                Expected(
                    12,
                    33,
                    "the optimizer is built while `actor`, handed in, may be on the CPU and `net.cuda()` in "
                    f"`Learner.place` {_LATER}; moving a module to XLA replaces its parameters, so move it first: "
                    "self.actor.to(torch_xla.device()).parameters()",
                ),
            ),
        ),
        invalid(
            APPENDED_LIST,
            APPENDED_LIST_SAGEMAKER,
            target="sagemaker",
            alias=True,
            note="loop-over-a-method-appending-to-its-list-alias-sagemaker",
            findings=(Expected(11, 33, "so move it first: self.actor.to(xm.xla_device()).parameters()"),),
        ),
    )


def loop_moved_valid() -> tuple[Valid, ...]:
    """Loops that move other modules than the optimizer's, or tensors: no XLA203, no XLA213."""
    return (
        valid(OTHER_MODULES, OTHER_MODULES_PORTED, note="loops-move-other-modules-or-tensors"),
        valid(
            OTHER_MODULES,
            OTHER_MODULES_SAGEMAKER,
            target="sagemaker",
            note="loops-move-other-modules-or-tensors-sagemaker",
        ),
    )


def untraced_loop_invalid() -> tuple[Invalid, ...]:
    """XLA213: a loop over a value of the instance the tool cannot read may move the optimizer's module."""
    said = (
        "the optimizer is built over `policy`, which may be on the CPU, and `m.to(device)` in `Agent.to_device` "
        "moves each element of `self.nets.values()`, which the tool cannot trace, later"
    )
    return (
        invalid(
            UNREAD_VALUES, UNREAD_VALUES_PORTED, note="loop-over-unread-values", findings=(Expected(11, 37, said),)
        ),
        invalid(
            UNREAD_VALUES,
            UNREAD_VALUES_SAGEMAKER,
            target="sagemaker",
            note="loop-over-unread-values-sagemaker",
            findings=(Expected(10, 37, said),),
        ),
    )
