"""XLA303's cases of host reads through a name and of loops that only move inputs: a move to a name
bound only to the CPU device (FCOS's ``cpu_device = torch.device("cpu")``, then ``output = [o.to(
cpu_device) for o in output]``) reads to the host as ``.to("cpu")`` does, and what it gives, bound
again to the same name in every iteration, is no device value the loop accumulates; a name the
function may bind to the device too is no such read.  A loop that only moves a batch's parts to the
device, also through a container's own ``to_device`` (LibRecommender's ``GraphTrainer._to_device``),
is part of the step it feeds, not an evaluation loop."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

CPU_DEVICE_READ_WHY = (
    ' A move to a name bound only to the CPU device (`cpu_device = torch.device("cpu")`, in the function or '
    'the module) reads as `.to("cpu")` does, and a name the iteration binds again to such a host value, on every '
    "path, holds no device value from there on."
)

# FCOS's compute_on_dataset: every output copied to the host through a name bound to the CPU device.
_CPU_DEVICE = """\
import torch

device = torch.device("cuda")


def compute_on_dataset(model, loader):
    results = {}
    cpu_device = torch.device("cpu")
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids, output))
    return results
"""
_CPU_DEVICE_PORTED = """\
import torch
import torch_xla

device = torch_xla.device()


def compute_on_dataset(model, loader):
    results = {}
    cpu_device = torch.device("cpu")
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids, output))
    return results
"""
# The same, the name bound at the module level.
_MODULE_CPU = """\
import torch

device = torch.device("cuda")
CPU = torch.device("cpu")


def compute_on_dataset(model, loader):
    results = {}
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(CPU) for o in output]
            results.update(zip(ids, output))
    return results
"""
_MODULE_CPU_PORTED = """\
import torch
import torch_xla

device = torch_xla.device()
CPU = torch.device("cpu")


def compute_on_dataset(model, loader):
    results = {}
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(CPU) for o in output]
            results.update(zip(ids, output))
    return results
"""
# LibRecommender's GraphTrainer: a loop that moves the parts of one batch, through ``to_device`` or ``.to``.
_MOVES_ONLY = """\
import torch


class Message:
    def __init__(self, x):
        self.x = x

    def to_device(self, device):
        return Message(self.x.to(device))


class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def _to_device(self, data):
        moved = []
        for d in data:
            if isinstance(d, Message):
                d = d.to_device(self.device)
            else:
                d = d.to(self.device)
            moved.append(d)
        return moved

    def run(self, loader):
        for batch in loader:
            x, y = self._to_device(batch)
            loss = (self.model(x.x) - y).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""
_MOVES_ONLY_PORTED = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm


class Message:
    def __init__(self, x):
        self.x = x

    def to_device(self, device):
        return Message(self.x.to(device))


class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def _to_device(self, data):
        moved = []
        for d in data:
            if isinstance(d, Message):
                d = d.to_device(self.device)
            else:
                d = d.to(self.device)
            moved.append(d)
        return moved

    def run(self, loader):
        for batch in loader:
            x, y = self._to_device(batch)
            loss = (self.model(x.x) - y).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            torch_xla.sync()
"""
# The name may be bound to the device: the copy may stay there.
_MAYBE_DEVICE = """\
import torch

device = torch.device("cuda")


def compute_on_dataset(model, loader, keep):
    results = {}
    cpu_device = torch.device("cpu")
    if keep:
        cpu_device = device
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids, output))
    return results
"""
_MAYBE_DEVICE_PORTED = """\
import torch
import torch_xla

device = torch_xla.device()


def compute_on_dataset(model, loader, keep):
    results = {}
    cpu_device = torch.device("cpu")
    if keep:
        cpu_device = device
    with torch.no_grad():
        for images, ids in loader:
            output = model(images.to(device))
            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids, output))
            torch_xla.sync()
    return results
"""

_MESSAGE = "evaluation loop over the device (no call in every iteration reads a value to the host"
_ALIASED = (("import torch\n", "import torch as T\n"), ("torch.device(", "T.device("), ("torch.no_grad(", "T.no_grad("))


def cpu_device_read_valid() -> tuple[Valid, ...]:
    return (
        valid(_CPU_DEVICE, _CPU_DEVICE_PORTED, note="a-move-to-a-name-bound-to-the-cpu-device-reads"),
        valid(_MODULE_CPU, _MODULE_CPU_PORTED, note="a-module-level-name-bound-to-the-cpu-device"),
        valid(_MOVES_ONLY, _MOVES_ONLY_PORTED, note="a-loop-that-only-moves-inputs-also-through-to-device"),
    )


def cpu_device_read_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _MAYBE_DEVICE,
            _MAYBE_DEVICE_PORTED,
            note="a-name-that-may-be-bound-to-the-device-is-no-read",
            findings=(Expected(17, 13, _MESSAGE),),
        ),
        invalid(
            substituted(_MAYBE_DEVICE, *_ALIASED),
            substituted(_MAYBE_DEVICE_PORTED, *_ALIASED),
            alias=True,
            note="a-name-that-may-be-bound-to-the-device-aliased-torch",
            findings=(Expected(17, 13, _MESSAGE),),
        ),
    )
