"""XLA203's cases for a module an optimizer steps, moved to the CPU and back to the device
after the optimizer is built (a checkpoint saved as ``torch.save(self.encoder.cpu(), path)``):
on XLA each move replaces its Parameter objects, and the optimizer keeps the old ones."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid
from codemods.training.rules.round_trip_samplers import (
    SAMPLED_ON_THE_CPU,
    SAMPLED_ON_THE_CPU_PORTED,
    SAMPLED_WITH_A_CPU_COPY,
    SAMPLED_WITH_A_CPU_COPY_PORTED,
)

# A trainer that saves its encoder, a submodule of the model its optimizer steps, as a CPU
# module after each epoch, then moves it back.
SAVED_ON_THE_CPU_AND_MOVED_BACK = """
import torch
from torch import nn


class Trainer:
    def __init__(self, encoder, device):
        self.device = device
        self.encoder = encoder
        self.model = nn.Sequential(encoder, nn.Linear(8, 2)).to(device)
        self.optim = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train_epoch(self, loader):
        for x in loader:
            loss = self.model(x.to(self.device)).sum()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()

    def save(self, path):
        torch.save(self.encoder.cpu(), path)
        self.encoder.to(self.device)


trainer = Trainer(nn.Linear(8, 8), torch.device("cuda"))
for epoch in range(3):
    trainer.train_epoch(loader)
    trainer.save(f"encoder{epoch}.pt")
"""


SAVED_ON_THE_CPU_AND_MOVED_BACK_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, encoder, device):
        self.device = device
        self.encoder = encoder
        self.model = nn.Sequential(encoder, nn.Linear(8, 2)).to(device)
        self.optim = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train_epoch(self, loader):
        for x in loader:
            loss = self.model(x.to(self.device)).sum()
            self.optim.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optim)
            torch_xla.sync()

    def save(self, path):
        torch.save(self.encoder.cpu(), path)
        self.encoder.to(self.device)


trainer = Trainer(nn.Linear(8, 8), torch_xla.device())
for epoch in range(3):
    trainer.train_epoch(loader)
    trainer.save(f"encoder{epoch}.pt")
"""


# In a function: the model moved back by name, the module built over it moved back by a helper.
ROUND_TRIPS_IN_A_FUNCTION = """
import torch
from torch import nn


def to_gpu(module):
    return module.cuda()


def train(loader, epochs):
    device = torch.device("cuda")
    model = nn.Linear(4, 2).to(device)
    head = nn.Sequential(model, nn.ReLU()).to(device)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            head(x.to(device)).sum().backward()
            optimizer.step()
        torch.save(model.cpu(), f"model{epoch}.pt")
        model.to(device)
        head.to("cpu")
        to_gpu(head)
"""


ROUND_TRIPS_IN_A_FUNCTION_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def to_gpu(module):
    return module.to(torch_xla.device())


def train(loader, epochs):
    device = torch_xla.device()
    model = nn.Linear(4, 2).to(device)
    head = nn.Sequential(model, nn.ReLU()).to(device)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            head(x.to(device)).sum().backward()
            xm.optimizer_step(optimizer)
        torch.save(model.cpu(), f"model{epoch}.pt")
        model.to(device)
        head.to("cpu")
        to_gpu(head)
"""


# Right on XLA: a tensor and a module no optimizer steps moved to the CPU, a state dict saved,
# an optimizer built again after the move back, and a last move to the CPU that nothing undoes.
ROUND_TRIPS_THAT_STRAND_NOTHING = """
import torch
from torch import nn


def train(loader, epochs):
    device = torch.device("cuda")
    model = nn.Linear(4, 2).to(device)
    ema = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            loss = model(x.to(device)).sum()
            loss.backward()
            optimizer.step()
        print(loss.cpu())
        torch.save(ema.cpu(), "ema.pt")
        ema.to(device)
        torch.save(model.state_dict(), f"model{epoch}.pt")
        model.cpu()
        model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.save(model.cpu(), "last.pt")
"""


ROUND_TRIPS_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def train(loader, epochs):
    device = torch_xla.device()
    model = nn.Linear(4, 2).to(device)
    ema = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            loss = model(x.to(device)).sum()
            loss.backward()
            xm.optimizer_step(optimizer)
        print(loss.cpu())
        torch.save(ema.cpu(), "ema.pt")
        ema.to(device)
        xm.save(model.state_dict(), f"model{epoch}.pt")
        model.cpu()
        model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.save(model.cpu(), "last.pt")
"""


# A save helper that moves the module it is handed to the CPU and back (SPADE's
# ``save_network``), called by position and by keyword.
SAVED_BY_A_HELPER = """
import torch
from torch import nn


def save_net(net, path, use_gpu):
    torch.save(net.cpu().state_dict(), path)
    if use_gpu and torch.cuda.is_available():
        net.cuda()


def train(loader, epochs, use_gpu=True):
    net = nn.Linear(4, 2).cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            net(x.cuda()).sum().backward()
            optimizer.step()
        save_net(net, f"net{epoch}.pt", use_gpu)
        save_net(path="last.pt", use_gpu=use_gpu, net=net)
"""


SAVED_BY_A_HELPER_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def save_net(net, path, use_gpu):
    xm.save(net.cpu().state_dict(), path)
    if use_gpu:
        net.to(torch_xla.device())


def train(loader, epochs, use_gpu=True):
    net = nn.Linear(4, 2).to(torch_xla.device())
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            net(x.to(torch_xla.device())).sum().backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        save_net(net, f"net{epoch}.pt", use_gpu)
        save_net(path="last.pt", use_gpu=use_gpu, net=net)
"""


# Right on XLA: the helper's round trip on a module no optimizer steps, and a helper that saves
# the state dict and moves the module only to the device.
HELPERS_THAT_STRAND_NOTHING = """
import torch
from torch import nn


def save_net(net, path, use_gpu):
    torch.save(net.cpu().state_dict(), path)
    if use_gpu and torch.cuda.is_available():
        net.cuda()


def save_state(net, path):
    torch.save(net.state_dict(), path)
    net.cuda()


def train(loader, epochs, use_gpu=True):
    net = nn.Linear(4, 2).cuda()
    ema = nn.Linear(4, 2).cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            net(x.cuda()).sum().backward()
            optimizer.step()
        save_net(ema, f"ema{epoch}.pt", use_gpu)
        save_state(net, f"net{epoch}.pt")
"""


HELPERS_THAT_STRAND_NOTHING_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


def save_net(net, path, use_gpu):
    xm.save(net.cpu().state_dict(), path)
    if use_gpu:
        net.to(torch_xla.device())


def save_state(net, path):
    xm.save(net.state_dict(), path)
    net.to(torch_xla.device())


def train(loader, epochs, use_gpu=True):
    net = nn.Linear(4, 2).to(torch_xla.device())
    ema = nn.Linear(4, 2).to(torch_xla.device())
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x in loader:
            optimizer.zero_grad()
            net(x.to(torch_xla.device())).sum().backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        save_net(ema, f"ema{epoch}.pt", use_gpu)
        save_state(net, f"net{epoch}.pt")
"""


# An optimizer built in a method other than ``__init__`` (pix2pixHD's ``initialize``), over
# parameters collected into a name first, and a method that hands its module to an inherited
# save helper that moves it to the CPU and back.
SAVED_BY_AN_INHERITED_HELPER = """
import torch
from torch import nn


class Base:
    def save_network(self, network, path):
        torch.save(network.cpu().state_dict(), path)
        network.cuda()


class Model(Base):
    def initialize(self):
        self.netG = nn.Linear(4, 2).cuda()
        params = list(self.netG.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=0.1)

    def save(self, path):
        self.save_network(self.netG, path)


model = Model()
model.initialize()
for step, x in enumerate(loader):
    model.optimizer_G.zero_grad()
    model.netG(x.cuda()).sum().backward()
    model.optimizer_G.step()
    if step % 100 == 0:
        model.save("latest.pt")
"""


SAVED_BY_AN_INHERITED_HELPER_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Base:
    def save_network(self, network, path):
        xm.save(network.cpu().state_dict(), path)
        network.to(torch_xla.device())


class Model(Base):
    def initialize(self):
        self.netG = nn.Linear(4, 2).to(torch_xla.device())
        params = list(self.netG.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=0.1)

    def save(self, path):
        self.save_network(self.netG, path)


model = Model()
model.initialize()
for step, x in enumerate(loader):
    model.optimizer_G.zero_grad()
    model.netG(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(model.optimizer_G)
    if step % 100 == 0:
        model.save("latest.pt")
    torch_xla.sync()
"""


# Right on XLA: the round trip of a method that the one building the optimizer calls first
# (it runs before the optimizer exists), and a save that leaves the module where it is.
RELOADED_BEFORE_THE_OPTIMIZER = """
import torch
from torch import nn


class Model:
    def initialize(self):
        self.netG = nn.Linear(4, 2).cuda()
        self.reload("init.pt")
        params = list(self.netG.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=0.1)

    def reload(self, path):
        self.netG.cpu()
        self.netG.load_state_dict(torch.load(path))
        self.netG.cuda()

    def save(self, path):
        torch.save(self.netG.state_dict(), path)


model = Model()
model.initialize()
for step, x in enumerate(loader):
    model.optimizer_G.zero_grad()
    model.netG(x.cuda()).sum().backward()
    model.optimizer_G.step()
    if step % 100 == 0:
        model.save("latest.pt")
"""


RELOADED_BEFORE_THE_OPTIMIZER_PORTED = """
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm


class Model:
    def initialize(self):
        self.netG = nn.Linear(4, 2).to(torch_xla.device())
        self.reload("init.pt")
        params = list(self.netG.parameters())
        self.optimizer_G = torch.optim.Adam(params, lr=0.1)

    def reload(self, path):
        self.netG.cpu()
        self.netG.load_state_dict(torch.load(path, map_location="cpu"))
        self.netG.to(torch_xla.device())

    def save(self, path):
        xm.save(self.netG.state_dict(), path)


model = Model()
model.initialize()
for step, x in enumerate(loader):
    model.optimizer_G.zero_grad()
    model.netG(x.to(torch_xla.device())).sum().backward()
    xm.optimizer_step(model.optimizer_G)
    if step % 100 == 0:
        model.save("latest.pt")
    torch_xla.sync()
"""


def round_trip_valid() -> tuple[Valid, ...]:
    return (
        valid(
            ROUND_TRIPS_THAT_STRAND_NOTHING,
            ROUND_TRIPS_THAT_STRAND_NOTHING_PORTED,
            note="cpu-moves-that-strand-no-optimizer",
        ),
        valid(HELPERS_THAT_STRAND_NOTHING, HELPERS_THAT_STRAND_NOTHING_PORTED, note="helpers-that-strand-no-optimizer"),
        valid(
            SAMPLED_WITH_A_CPU_COPY, SAMPLED_WITH_A_CPU_COPY_PORTED, note="a-sampler-running-a-cpu-copy-of-the-policy"
        ),
        valid(
            RELOADED_BEFORE_THE_OPTIMIZER,
            RELOADED_BEFORE_THE_OPTIMIZER_PORTED,
            note="a-round-trip-run-before-the-optimizer-a-method-builds",
        ),
    )


def round_trip_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            SAVED_ON_THE_CPU_AND_MOVED_BACK,
            SAVED_ON_THE_CPU_AND_MOVED_BACK_PORTED,
            note="a-submodule-saved-on-the-cpu-and-moved-back",
            findings=(
                Expected(
                    23,
                    20,
                    "`self.encoder.cpu()` moves `self.encoder`, whose parameters `self.optim` steps, off the XLA "
                    "device, and `self.encoder.to(self.device)` moves it back",
                ),
            ),
        ),
        invalid(
            ROUND_TRIPS_IN_A_FUNCTION,
            ROUND_TRIPS_IN_A_FUNCTION_PORTED,
            note="round-trips-in-a-function",
            findings=(
                Expected(22, 20, "`model.cpu()` moves `model`, whose parameters `optimizer` steps, off the XLA device"),
                Expected(24, 9, '`head.to("cpu")` moves `head`, whose parameters `optimizer` steps, off the XLA'),
            ),
        ),
        invalid(
            SAVED_BY_A_HELPER,
            SAVED_BY_A_HELPER_PORTED,
            note="a-module-saved-by-a-helper-that-moves-it-to-the-cpu-and-back",
            findings=(
                Expected(
                    22,
                    9,
                    '`save_net(net, f"net{epoch}.pt", use_gpu)` moves `net`, whose parameters `optimizer` steps, off '
                    "the XLA device, and `net.cuda()` in `save_net` moves it back",
                ),
                Expected(23, 9, '`save_net(path="last.pt", use_gpu=use_gpu, net=net)` moves `net`, whose parameters'),
            ),
        ),
        invalid(
            SAVED_BY_AN_INHERITED_HELPER,
            SAVED_BY_AN_INHERITED_HELPER_PORTED,
            note="a-module-an-initialize-method-optimizes-saved-by-an-inherited-helper",
            findings=(
                Expected(
                    20,
                    9,
                    "`self.save_network(self.netG, path)` moves `self.netG`, whose parameters `self.optimizer_G` "
                    "steps, off the XLA device, and `network.cuda()` in `Base.save_network` moves it back",
                ),
            ),
        ),
        invalid(
            SAMPLED_ON_THE_CPU,
            SAMPLED_ON_THE_CPU_PORTED,
            note="a-sampler-that-moves-the-policy-to-the-cpu-and-back-through-a-helper",
            findings=(
                Expected(
                    28,
                    11,
                    "`Sampler(policy, device)` hands `policy`, whose parameters `optimizer` steps, to `Sampler`, which "
                    "moves it off the XLA device and back (in its methods, for a class)",
                ),
            ),
        ),
    )
