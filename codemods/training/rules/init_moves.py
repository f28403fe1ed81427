"""XLA203's cases for a module class whose ``__init__`` builds optimizers over the parameters
of the instance or of the modules it registers, then moves the instance itself
(``self.to(self.device)``), or whose caller moves it: the move replaces the parameters the
optimizers hold."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A solver that registers its networks from a dict, builds one optimizer per network in a dict
# comprehension, then moves itself (a plain dict bound to ``self.nets`` registers nothing).
CONTAINER_MOVED_IN_INIT = """
import torch
import torch.nn as nn


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
        for name, module in nets.items():
            setattr(self, name, module)
        self.nets = nets
        self.optims = {name: torch.optim.Adam(m.parameters(), lr=1e-3) for name, m in nets.items()}
        self.to(self.device)

    def train_loop(self, steps):
        for _ in range(steps):
            x = torch.randn(8, 4).to(self.device)
            loss = self.nets["disc"](self.nets["gen"](x)).pow(2).mean()
            loss.backward()
            self.optims["gen"].step()
"""


CONTAINER_MOVED_IN_INIT_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        self.device = torch_xla.device()
        nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
        for name, module in nets.items():
            setattr(self, name, module)
        self.nets = nets
        self.optims = {name: torch.optim.Adam(m.parameters(), lr=1e-3) for name, m in nets.items()}
        self.to(self.device)

    def train_loop(self, steps):
        for _ in range(steps):
            x = torch.randn(8, 4).to(self.device)
            loss = self.nets["disc"](self.nets["gen"](x)).pow(2).mean()
            loss.backward()
            xm.optimizer_step(self.optims["gen"])
            torch_xla.sync()
"""


# Optimizers over the submodules ``__init__`` sets, or over the members of a ModuleDict it
# sets, then ``self.cuda()``: a module of classes (no entry point), for the files that train
# with it.
SUBMODULES_MOVED_IN_INIT = """
from torch import nn
from torch import optim as O


class GAN(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.disc = nn.Linear(4, 1)
        self.opt_g = O.Adam(self.gen.parameters(), lr=1e-3)
        self.opt_d = O.Adam(self.disc.parameters(), lr=1e-3)
        self.cuda()



class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.nets = nn.ModuleDict({"gen": nn.Linear(4, 4)})
        self.optims = {key: O.Adam(m.parameters()) for key, m in self.nets.items()}
        self.cuda()
"""


SUBMODULES_MOVED_IN_INIT_PORTED = """
from torch import nn
from torch import optim as O
import torch_xla


class GAN(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.disc = nn.Linear(4, 1)
        self.opt_g = O.Adam(self.gen.parameters(), lr=1e-3)
        self.opt_d = O.Adam(self.disc.parameters(), lr=1e-3)
        self.to(torch_xla.device())



class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.nets = nn.ModuleDict({"gen": nn.Linear(4, 4)})
        self.optims = {key: O.Adam(m.parameters()) for key, m in self.nets.items()}
        self.to(torch_xla.device())
"""


# Optimizers over the members of a ModuleDict, filled in a loop; the caller moves the instance.
CONTAINER_MOVED_BY_THE_CALLER = """
import torch
from torch import nn


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
        self.nets = nn.ModuleDict(nets)
        self.optims = {}
        for name, m in nets.items():
            self.optims[name] = torch.optim.Adam(m.parameters(), lr=1e-3)


def main(loader):
    device = torch.device("cuda")
    solver = Solver().to(device)
    for x in loader:
        solver.nets["disc"](solver.nets["gen"](x.to(device))).mean().backward()
        solver.optims["gen"].step()
"""


CONTAINER_MOVED_BY_THE_CALLER_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        nets = {"gen": nn.Linear(4, 4), "disc": nn.Linear(4, 1)}
        self.nets = nn.ModuleDict(nets)
        self.optims = {}
        for name, m in nets.items():
            self.optims[name] = torch.optim.Adam(m.parameters(), lr=1e-3)


def main(loader):
    device = torch_xla.device()
    solver = Solver().to(device)
    for x in pl.MpDeviceLoader(loader, device):
        solver.nets["disc"](solver.nets["gen"](x.to(device))).mean().backward()
        xm.optimizer_step(solver.optims["gen"])
"""


# Moved before the optimizer; optimizers over modules the instance does not register (handed
# in, or in a plain dict, also one bound to an attribute); moved to the CPU or cast: no finding.
INIT_MOVES_THAT_STRAND_NOTHING = """
import torch
from torch import nn


class MovedFirst(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.to(device)
        self.opt = torch.optim.Adam(self.gen.parameters(), lr=1e-3)


class NotHeld(nn.Module):
    def __init__(self, gen, device):
        super().__init__()
        nets = {"gen": gen, "disc": nn.Linear(4, 1)}
        self.nets = nets
        self.optims = {name: torch.optim.Adam(m.parameters()) for name, m in nets.items()}
        self.opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
        self.head = nn.Linear(4, 1)
        self.to(device)


class OnTheCpu(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.opt = torch.optim.Adam(self.gen.parameters(), lr=1e-3)
        self.to("cpu")
        self.to(torch.bfloat16)


class PlainDict(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.nets = {"gen": nn.Linear(4, 4)}
        self.opt = torch.optim.Adam(self.nets["gen"].parameters(), lr=1e-3)
        self.to(device)


def train(model, loader):
    for x in loader:
        model.gen(x.cuda()).mean().backward()
        model.opt.step()
"""


INIT_MOVES_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn
import torch_xla


class MovedFirst(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.to(device)
        self.opt = torch.optim.Adam(self.gen.parameters(), lr=1e-3)


class NotHeld(nn.Module):
    def __init__(self, gen, device):
        super().__init__()
        nets = {"gen": gen, "disc": nn.Linear(4, 1)}
        self.nets = nets
        self.optims = {name: torch.optim.Adam(m.parameters()) for name, m in nets.items()}
        self.opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
        self.head = nn.Linear(4, 1)
        self.to(device)


class OnTheCpu(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.opt = torch.optim.Adam(self.gen.parameters(), lr=1e-3)
        self.to("cpu")
        self.to(torch.bfloat16)


class PlainDict(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.nets = {"gen": nn.Linear(4, 4)}
        self.opt = torch.optim.Adam(self.nets["gen"].parameters(), lr=1e-3)
        self.to(device)


def train(model, loader):
    for x in loader:
        model.gen(x.to(torch_xla.device())).mean().backward()
        model.opt.step()
        torch_xla.sync()
"""


def init_move_valid() -> tuple[Valid, ...]:
    return (
        valid(
            INIT_MOVES_THAT_STRAND_NOTHING,
            INIT_MOVES_THAT_STRAND_NOTHING_PORTED,
            note="init-moves-first-or-moves-no-module-an-optimizer-holds",
        ),
    )


def init_move_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            CONTAINER_MOVED_IN_INIT,
            CONTAINER_MOVED_IN_INIT_PORTED,
            note="init-moves-itself-after-optimizers-over-the-networks-it-registers",
            findings=(
                Expected(
                    16,
                    9,
                    "`self.to(self.device)` moves the `Solver` instance to the XLA device after `Solver.__init__` "
                    "built `self.optims` over its parameters",
                ),
            ),
        ),
        invalid(
            SUBMODULES_MOVED_IN_INIT,
            SUBMODULES_MOVED_IN_INIT_PORTED,
            alias=True,
            note="init-moves-itself-after-optimizers-over-its-submodules",
            findings=(
                Expected(
                    13,
                    9,
                    "`self.cuda()` moves the `GAN` instance to the XLA device after `GAN.__init__` built "
                    "`self.opt_g` and `self.opt_d`",
                ),
                Expected(22, 9, "so `self.optims` holds the stale CPU copies"),
            ),
        ),
        invalid(
            CONTAINER_MOVED_BY_THE_CALLER,
            CONTAINER_MOVED_BY_THE_CALLER_PORTED,
            note="optimizers-over-a-module-dict-moved-by-the-caller",
            findings=(
                Expected(
                    20, 14, "`Solver().to(device)` moves `solver` to the XLA device after `Solver.__init__` built"
                ),
            ),
        ),
    )
