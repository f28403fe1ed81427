"""XLA201's cases for optimizers reached through what holds them: an instance (``gan.opt_g``), an
instance of a class kept on another instance (``self.gan.opt_g``), a namespace, dicts and attribute
bags (``optims["disc"]``, ``bag.ema``), and a list filled by ``append`` or built as one, stepped
through a loop over it (training/optimizer_lists.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

_TWO_LEVEL = """
import torch
import torch.nn as nn


class GAN:
    def __init__(self, device):
        self.g = nn.Linear(4, 4).to(device)
        self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-2)
        self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)


class Runner:
    def __init__(self, device):
        self.gan = GAN(device)
        self.optims = []
        for net in (self.gan.g,):
            self.optims.append(torch.optim.SGD(net.parameters(), lr=0.1))

    def run(self, batches):
        for x in batches:
            self.gan.g(x).sum().backward()
            self.gan.opt_g.step()
            self.gan.decay.step()
            for opt in self.optims:
                opt.step()
"""


def _two_level() -> Invalid:
    converted = (
        _TWO_LEVEL.replace(
            "import torch.nn as nn\n",
            "import torch.nn as nn\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
        )
        .replace("self.gan.opt_g.step()", "xm.optimizer_step(self.gan.opt_g)")
        .replace(
            "                opt.step()\n", "                xm.optimizer_step(opt)\n            torch_xla.sync()\n"
        )
    )
    return invalid(
        _TWO_LEVEL,
        converted,
        note="an-optimizer-of-an-instance-held-by-an-instance-and-a-list-filled-by-append",
        findings=(
            Expected(24, 13, "self.gan.opt_g.step() -> xm.optimizer_step(self.gan.opt_g)"),
            Expected(27, 17, "opt.step() -> xm.optimizer_step(opt)"),
        ),
    )


def held_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        _two_level(),
        invalid(
            """
            import torch.optim as O

            solvers = [O.Adam(net.parameters()) for net in nets]
            for x in loader:
                loss_fn(x).backward()
                for s in solvers:
                    s.step()
            """,
            """
            import torch.optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm

            solvers = [O.Adam(net.parameters()) for net in nets]
            for x in loader:
                loss_fn(x).backward()
                for s in solvers:
                    xm.optimizer_step(s)
                torch_xla.sync()
            """,
            alias=True,
            note="a-list-of-optimizers-built-by-a-comprehension",
            findings=(Expected(9, 9, "s.step() -> xm.optimizer_step(s)"),),
        ),
        invalid(
            """
            import torch
            import torch.nn as nn


            class GAN:
                def __init__(self):
                    self.g = nn.Linear(4, 4)
                    self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-3)
                    self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)


            gan = GAN()
            for x in loader:
                gan.g(x.cuda()).sum().backward()
                gan.opt_g.step()
                gan.decay.step()
            """,
            """
            import torch
            import torch.nn as nn
            import torch_xla
            import torch_xla.core.xla_model as xm


            class GAN:
                def __init__(self):
                    self.g = nn.Linear(4, 4)
                    self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-3)
                    self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)


            gan = GAN()
            for x in loader:
                gan.g(x.to(torch_xla.device())).sum().backward()
                xm.optimizer_step(gan.opt_g)
                gan.decay.step()
                torch_xla.sync()
            """,
            note="optimizer-kept-on-an-instance",
            findings=(Expected(17, 5, "gan.opt_g.step() -> xm.optimizer_step(gan.opt_g)"),),
        ),
        invalid(
            """
            import torch.optim as O


            class Agent:
                def __init__(self, net):
                    self.net = net
                    self.opt_pi = O.SGD(net.parameters(), lr=0.1)


            def train(net, loader):
                agent = Agent(net)
                for x in loader:
                    agent.net(x.cuda()).sum().backward()
                    agent.opt_pi.step()
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm


            class Agent:
                def __init__(self, net):
                    self.net = net
                    self.opt_pi = O.SGD(net.parameters(), lr=0.1)


            def train(net, loader):
                agent = Agent(net)
                for x in loader:
                    agent.net(x.to(xm.xla_device())).sum().backward()
                    xm.optimizer_step(agent.opt_pi)
                    xm.mark_step()
            """,
            target="sagemaker",
            note="optimizer-kept-on-an-instance-aliased-sagemaker",
            alias=True,
            findings=(Expected(15, 9, "agent.opt_pi.step() -> xm.optimizer_step(agent.opt_pi)"),),
        ),
        invalid(
            """
            from types import SimpleNamespace

            import torch

            optims = SimpleNamespace(
                gen=torch.optim.Adam(gen.parameters(), lr=1e-3),
                disc=torch.optim.Adam(disc.parameters(), lr=1e-3),
            )
            scheds = SimpleNamespace(gen=torch.optim.lr_scheduler.StepLR(optims.gen, 10))
            for x in loader:
                disc(gen(x)).mean().backward()
                optims.disc.step()
                optims.gen.step()
                scheds.gen.step()
            """,
            """
            from types import SimpleNamespace

            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            optims = SimpleNamespace(
                gen=torch.optim.Adam(gen.parameters(), lr=1e-3),
                disc=torch.optim.Adam(disc.parameters(), lr=1e-3),
            )
            scheds = SimpleNamespace(gen=torch.optim.lr_scheduler.StepLR(optims.gen, 10))
            for x in loader:
                disc(gen(x)).mean().backward()
                xm.optimizer_step(optims.disc)
                xm.optimizer_step(optims.gen)
                scheds.gen.step()
                torch_xla.sync()
            """,
            note="optimizers-kept-in-a-namespace",
            findings=(
                Expected(14, 5, "optims.disc.step() -> xm.optimizer_step(optims.disc)"),
                Expected(15, 5, "optims.gen.step() -> xm.optimizer_step(optims.gen)"),
            ),
        ),
        invalid(
            """
            import munch
            import torch.optim as O

            optims = {"gen": O.Adam(gen.parameters()), "disc": O.SGD(disc.parameters(), lr=0.1)}
            bag = munch.Munch(ema=O.Adam(ema.parameters()))
            more = dict(head=O.Adam(head.parameters()))
            for x in loader:
                disc(gen(x)).mean().backward()
                optims["disc"].step()
                bag.ema.step()
                bag["ema"].step()
                more["head"].step()
            """,
            """
            import munch
            import torch.optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm

            optims = {"gen": O.Adam(gen.parameters()), "disc": O.SGD(disc.parameters(), lr=0.1)}
            bag = munch.Munch(ema=O.Adam(ema.parameters()))
            more = dict(head=O.Adam(head.parameters()))
            for x in loader:
                disc(gen(x)).mean().backward()
                xm.optimizer_step(optims["disc"])
                xm.optimizer_step(bag.ema)
                xm.optimizer_step(bag["ema"])
                xm.optimizer_step(more["head"])
                torch_xla.sync()
            """,
            alias=True,
            note="optimizers-kept-in-dicts-and-attribute-bags",
            findings=(
                Expected(11, 5, 'optims["disc"].step() -> xm.optimizer_step(optims["disc"])'),
                Expected(12, 5, "bag.ema.step() -> xm.optimizer_step(bag.ema)"),
                Expected(13, 5, 'bag["ema"].step() -> xm.optimizer_step(bag["ema"])'),
                Expected(14, 5, 'more["head"].step() -> xm.optimizer_step(more["head"])'),
            ),
        ),
    )
