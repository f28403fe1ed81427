"""XLA111's cases for a device flag the port rewrote ("cuda" -> "xla" in its default and choices)
handed to a function of the file that makes a device of it and returns one off XLA for "xla"
(mace's ``init_device``: "cuda" and "mps" named, the CPU for anything else): the run that names
the XLA device trains on the CPU (device/flag_helpers.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, invalid, valid

if TYPE_CHECKING:
    from codemods.engine.rule import Invalid, Valid

# The flag defaults to "cuda" (then "xla"); the helper maps "xla" to the CPU.
HELPER_MAPS_XLA_TO_CPU = """
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cpu", "cuda", "mps"], default="cuda")
args = parser.parse_args()


def init_device(device_str):
    if "cuda" in device_str:
        return torch.device(device_str)
    if device_str == "mps":
        return torch.device("mps")
    return torch.device("cpu")


device = init_device(args.device)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    opt.zero_grad()
    model(x.to(device)).sum().backward()
    opt.step()"""
HELPER_MAPS_XLA_TO_CPU_PORTED = """
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cpu", "xla", "mps"], default="xla")
args = parser.parse_args()


def init_device(device_str):
    if "cuda" in device_str:
        return torch.device(device_str)
    if device_str == "mps":
        return torch.device("mps")
    return torch.device("cpu")


device = init_device(args.device)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    opt.zero_grad()
    model(x.to(device)).sum().backward()
    xm.optimizer_step(opt)
    torch_xla.sync()"""
# An aliased torch, a CPU default (XLA111 at it too), a prefix test, in a function.
PREFIX_HELPER_ALIASED = """
import argparse

import torch as th


def init_device(name: str) -> th.device:
    if name.startswith("cuda"):
        return th.device(name)
    return th.device("cpu")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    opts = p.parse_args()
    dev = init_device(opts.device)
    net = th.nn.Linear(4, 1)
    net.to(dev)
    optimizer = th.optim.Adam(net.parameters())
    for x in [th.randn(2, 4)]:
        optimizer.zero_grad()
        net(x.to(dev)).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()"""
PREFIX_HELPER_ALIASED_SAGEMAKER = """
import argparse

import torch as th
import torch_xla.core.xla_model as xm


def init_device(name: str) -> th.device:
    if name.startswith("cuda"):
        return th.device(name)
    return th.device("cpu")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", choices=["cpu", "xla"], default="cpu")
    opts = p.parse_args()
    dev = init_device(opts.device)
    net = th.nn.Linear(4, 1)
    net.to(dev)
    optimizer = th.optim.Adam(net.parameters())
    for x in [th.randn(2, 4)]:
        optimizer.zero_grad()
        net(x.to(dev)).sum().backward()
        xm.optimizer_step(optimizer)
        xm.mark_step()


if __name__ == "__main__":
    main()"""
# Helpers that make a device of any other name ("xla" included), or choose the CPU by another flag.
HELPER_PASSES_XLA_ON = """
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cpu", "cuda", "mps"], default="cuda")
args = parser.parse_args()


def init_device(device_str):
    if device_str == "mps":
        return torch.device("mps")
    if device_str == "cpu":
        return torch.device("cpu")
    return torch.device(device_str)


def pick(device_str, fallback):
    if fallback:
        return torch.device("cpu")
    return torch.device(device_str)


device = init_device(args.device)
other = pick(args.device, args.cpu)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    opt.zero_grad()
    model(x.to(device)).sum().backward()
    opt.step()"""
HELPER_PASSES_XLA_ON_PORTED = """
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cpu", "xla", "mps"], default="xla")
args = parser.parse_args()


def init_device(device_str):
    if device_str == "mps":
        return torch.device("mps")
    if device_str == "cpu":
        return torch.device("cpu")
    return torch.device(device_str)


def pick(device_str, fallback):
    if fallback:
        return torch.device("cpu")
    return torch.device(device_str)


device = init_device(args.device)
other = pick(args.device, args.cpu)
model = torch.nn.Linear(4, 1).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    opt.zero_grad()
    model(x.to(device)).sum().backward()
    xm.optimizer_step(opt)
    torch_xla.sync()"""

_RETURNS_CPU = '`init_device()` returns "cpu" (the CPU) for "xla", the value the port wrote into the `--device` flag'


def flag_helper_valid() -> tuple[Valid, ...]:
    return (valid(HELPER_PASSES_XLA_ON, HELPER_PASSES_XLA_ON_PORTED, note="a-helper-that-passes-xla-on"),)


def flag_helper_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            HELPER_MAPS_XLA_TO_CPU,
            HELPER_MAPS_XLA_TO_CPU_PORTED,
            note="a-helper-that-maps-the-ported-flag-to-the-cpu",
            findings=(Expected(17, 25, _RETURNS_CPU + " that `init_device(args.device)` hands it"),),
        ),
        invalid(
            PREFIX_HELPER_ALIASED,
            PREFIX_HELPER_ALIASED_SAGEMAKER,
            target="sagemaker",
            alias=True,
            note="a-prefix-helper-that-maps-the-ported-flag-to-the-cpu-aliased-sagemaker",
            findings=(
                Expected(10, 22, _RETURNS_CPU + " that `init_device(opts.device)` hands it"),
                Expected(15, 65, 'once `init_device` returns the XLA device for "xla"'),
            ),
        ),
    )
