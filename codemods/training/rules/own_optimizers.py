"""XLA203's cases for module classes that build their optimizer over their own parameters
in ``__init__`` (BigGAN's Generator, RL agents) and are moved by the caller afterwards."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# Module classes that build their optimizer over their own parameters in ``__init__``
# (BigGAN's Generator/Discriminator, RL agents), moved by the caller afterwards; an
# instance built with ``no_optim=True`` skips the optimizer (BigGAN's EMA copy).
OWN_OPTIMIZERS_MOVED_LATER = """
import torch
from torch import nn, optim


class Generator(nn.Module):
    def __init__(self, lr=1e-3, no_optim=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if no_optim:
            return
        self.optim = optim.Adam(params=self.parameters(), lr=lr)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)


def main(loader):
    device = torch.device("cuda")
    G = Generator().to(device)
    G_ema = Generator(no_optim=True).to(device)
    D = Critic()
    D.cuda()
    for x in loader:
        G.optim.zero_grad()
        D(G(x.to(device))).sum().backward()
        G.optim.step()
"""


OWN_OPTIMIZERS_MOVED_LATER_PORTED = """
import torch
from torch import nn, optim
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Generator(nn.Module):
    def __init__(self, lr=1e-3, no_optim=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if no_optim:
            return
        self.optim = optim.Adam(params=self.parameters(), lr=lr)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)


def main(loader):
    device = torch_xla.device()
    G = Generator().to(device)
    G_ema = Generator(no_optim=True).to(device)
    D = Critic()
    D.to(torch_xla.device())
    for x in pl.MpDeviceLoader(loader, device):
        G.optim.zero_grad()
        D(G(x.to(device))).sum().backward()
        xm.optimizer_step(G.optim)
"""


OWN_OPTIMIZERS_KEPT_RIGHT = """
import torch
from torch import nn, optim


class Generator(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.to(device)
        self.optim = optim.Adam(self.parameters(), lr=1e-3)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optim = optim.Adam(self.parameters(), lr=1e-3)


device = torch.device("cuda")
G = Generator(device).to(device)
kept = Critic()
on_cpu = Critic().to("cpu")
half = Critic().to(torch.bfloat16)
for x in loader:
    G.optim.zero_grad()
    G(x.to(device)).sum().backward()
    G.optim.step()
"""


OWN_OPTIMIZERS_KEPT_RIGHT_PORTED = """
import torch
from torch import nn, optim
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Generator(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.to(device)
        self.optim = optim.Adam(self.parameters(), lr=1e-3)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optim = optim.Adam(self.parameters(), lr=1e-3)


device = torch_xla.device()
G = Generator(device).to(device)
kept = Critic()
on_cpu = Critic().to("cpu")
half = Critic().to(torch.bfloat16)
for x in pl.MpDeviceLoader(loader, device):
    G.optim.zero_grad()
    G(x.to(device)).sum().backward()
    xm.optimizer_step(G.optim)
"""


# A module with its own optimizer moved by a helper of the file that moves what it is handed
# (``to_gpu(Agent())``, ``to_gpu(critic)``): Module.cuda moves in place, so the instance moves.
OWN_OPTIMIZERS_MOVED_BY_A_HELPER = """
import torch
from torch import nn, optim


def to_gpu(x):
    if torch.cuda.is_available():
        return x.cuda()
    return x


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=1e-3)


agent = to_gpu(Agent())
critic = Agent()
to_gpu(critic)
for x in batches:
    agent.optimizer.zero_grad()
    (agent.fc(to_gpu(x)).sum() + critic.fc(to_gpu(x)).sum()).backward()
    agent.optimizer.step()
"""


OWN_OPTIMIZERS_MOVED_BY_A_HELPER_PORTED = """
import torch
from torch import nn, optim
import torch_xla
import torch_xla.core.xla_model as xm


def to_gpu(x):
    return x.to(torch_xla.device())
    return x


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=1e-3)


agent = to_gpu(Agent())
critic = Agent()
to_gpu(critic)
for x in batches:
    agent.optimizer.zero_grad()
    (agent.fc(to_gpu(x)).sum() + critic.fc(to_gpu(x)).sum()).backward()
    xm.optimizer_step(agent.optimizer)
    torch_xla.sync()
"""


# Helpers that leave a module with its own optimizer on the CPU, or read it, or move a module
# without one: nothing is stale.
HELPERS_THAT_STRAND_NOTHING = """
import torch
from torch import nn, optim


def to_cpu(module):
    return module.to("cpu")


def to_device(module, device):
    return module.to(device)


def count(module):
    return sum(p.numel() for p in module.parameters())


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=1e-3)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


agent = to_cpu(Agent())
count(agent)
other = to_device(Agent(), torch.device("cpu"))
plain = to_device(Plain(), torch.device("cuda"))
optimizer = optim.SGD(plain.parameters(), lr=0.1)
for x in batches:
    optimizer.zero_grad()
    plain(x.cuda()).sum().backward()
    optimizer.step()
"""


HELPERS_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn, optim
import torch_xla
import torch_xla.core.xla_model as xm


def to_cpu(module):
    return module.to("cpu")


def to_device(module, device):
    return module.to(device)


def count(module):
    return sum(p.numel() for p in module.parameters())


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=1e-3)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)


agent = to_cpu(Agent())
count(agent)
other = to_device(Agent(), torch.device("cpu"))
plain = to_device(Plain(), torch_xla.device())
optimizer = optim.SGD(plain.parameters(), lr=0.1)
for x in batches:
    optimizer.zero_grad()
    plain(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""


# A class whose ``__init__`` moves its submodule before it builds the optimizer over it
# (``self.model = self.model.to(device)``, then ``Adam(self.model.parameters())``), moved again
# by the caller: the second move keeps the parameters, the optimizer holds them.  Moved to the
# CPU first instead, the caller's move strands it.
SUBMODULE_MOVED_FIRST = """
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.model = nn.Linear(4, 1)
        self.model = self.model{move}
        self.optimizer = torch.optim.Adam(self.model.parameters())


def train(loader, device):
    critic = Critic(device).to(device)
    for x in loader:
        critic.model(x.to(device)).sum().backward()
        critic.optimizer.step()
"""


def _submodule_moved_first(move: str, barrier: str, step: str) -> tuple[str, str]:
    source = SUBMODULE_MOVED_FIRST.format(move=move)
    ported = source.replace("from torch import nn\n", "from torch import nn\n" + barrier).replace(
        "        critic.optimizer.step()\n", step
    )
    return source, ported


def own_optimizer_valid() -> tuple[Valid, ...]:
    return (
        valid(
            *_submodule_moved_first(
                ".to(device)",
                "import torch_xla\nimport torch_xla.core.xla_model as xm\n",
                "        xm.optimizer_step(critic.optimizer)\n        torch_xla.sync()\n",
            ),
            note="a-submodule-moved-before-its-optimizer-then-the-instance-moved-again",
        ),
        valid(
            *_submodule_moved_first(
                ".to(device)",
                "import torch_xla.core.xla_model as xm\n",
                "        xm.optimizer_step(critic.optimizer)\n        xm.mark_step()\n",
            ),
            target="sagemaker",
            note="a-submodule-moved-before-its-optimizer-then-the-instance-moved-again-sagemaker",
        ),
        valid(
            OWN_OPTIMIZERS_KEPT_RIGHT,
            OWN_OPTIMIZERS_KEPT_RIGHT_PORTED,
            note="own-optimizer-moved-first-never-moved-or-on-the-cpu",
        ),
        valid(
            """
            import torch
            from torch import nn, optim


            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.optim = optim.Adam(self.parameters(), lr=1e-3)


            G = Generator().cuda()
            G.load_state_dict(torch.load("G.pth", map_location="cpu"))
            with torch.no_grad():
                samples = G(torch.randn(16, 4, device="cuda"))
            """,
            """
            import torch
            from torch import nn, optim
            import torch_xla


            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.optim = optim.Adam(self.parameters(), lr=1e-3)


            G = Generator().to(torch_xla.device())
            G.load_state_dict(torch.load("G.pth", map_location="cpu"))
            with torch.no_grad():
                samples = G(torch.randn(16, 4, device="xla"))
            """,
            note="own-optimizer-in-a-script-that-trains-nothing",
        ),
        valid(
            HELPERS_THAT_STRAND_NOTHING,
            HELPERS_THAT_STRAND_NOTHING_PORTED,
            note="own-optimizer-helpers-that-keep-it-on-the-cpu-or-move-a-module-without-one",
        ),
    )


def own_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            *_submodule_moved_first(
                ".cpu()",
                "import torch_xla\nimport torch_xla.core.xla_model as xm\n",
                "        xm.optimizer_step(critic.optimizer)\n        torch_xla.sync()\n",
            ),
            note="a-submodule-moved-to-the-cpu-before-its-optimizer-then-the-instance-moved",
            findings=(Expected(16, 14, "`Critic(device).to(device)` moves `critic` to a device that may be the XLA"),),
        ),
        invalid(
            OWN_OPTIMIZERS_MOVED_LATER,
            OWN_OPTIMIZERS_MOVED_LATER_PORTED,
            note="a-class-builds-its-optimizer-over-its-own-parameters-and-moves-later",
            findings=(
                Expected(
                    26, 9, "`Generator().to(device)` moves `G` to the XLA device after `Generator.__init__` built"
                ),
                Expected(29, 5, "`D.cuda()` moves `D` to the XLA device after `Critic.__init__` built `self.opt`"),
            ),
        ),
        invalid(
            """
            import torch.nn as tnn
            import torch.optim as o


            class Agent(tnn.Module):
                def __init__(self):
                    super(Agent, self).__init__()
                    self.net = tnn.Linear(4, 2)
                    self.optimizer = o.RMSprop(self.parameters())


            agent = Agent().to("cuda:0")
            for batch in batches:
                agent.optimizer.zero_grad()
                agent.net(batch.to("cuda:0")).sum().backward()
                agent.optimizer.step()
            """,
            """
            import torch.nn as tnn
            import torch.optim as o
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Agent(tnn.Module):
                def __init__(self):
                    super(Agent, self).__init__()
                    self.net = tnn.Linear(4, 2)
                    self.optimizer = o.RMSprop(self.parameters())


            agent = Agent().to("xla")
            for batch in batches:
                agent.optimizer.zero_grad()
                agent.net(batch.to("xla")).sum().backward()
                xm.optimizer_step(agent.optimizer)
                torch_xla.sync()
            """,
            alias=True,
            note="own-optimizer-through-aliases",
            findings=(
                Expected(14, 9, '`Agent().to("cuda:0")` moves `agent` to the XLA device after `Agent.__init__`'),
            ),
        ),
        invalid(
            OWN_OPTIMIZERS_MOVED_BY_A_HELPER,
            OWN_OPTIMIZERS_MOVED_BY_A_HELPER_PORTED,
            note="own-optimizer-moved-by-a-helper-that-moves-what-it-is-handed",
            findings=(
                Expected(
                    19, 9, "`to_gpu(Agent())` moves `agent` to the XLA device through `x.cuda()` in `to_gpu` after"
                ),
                Expected(21, 1, "`to_gpu(critic)` moves `critic` to the XLA device through `x.cuda()` in `to_gpu`"),
            ),
        ),
    )
