"""XLA111's cases for a device chosen as a CUDA index or the CPU by comparing the index with a
number (``args.device if args.device >= 0 else "cpu"``, an argparse int flag defaulting to -1):
off the XLA device whichever way it goes (device/shapes.py ``index_or_cpu``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, invalid, valid

if TYPE_CHECKING:
    from codemods.engine.rule import Invalid, Valid

# The CPU by default, cuda:N with ``--device N``: reported at the choice, naming the default.
INDEX_OR_CPU = """
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=int, default=-1)
args = parser.parse_args()
device = args.device if args.device >= 0 else "cpu"
model = torch.nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).sum().backward()
    optimizer.step()
"""
INDEX_OR_CPU_PORTED = """
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=int, default=-1)
args = parser.parse_args()
device = args.device if args.device >= 0 else "cpu"
model = torch.nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""
# The same choice written the other way round, an aliased torch, a flag read through a parameter.
CPU_OR_INDEX_ALIASED = """
import argparse

import torch as th


def main(opts):
    dev = "cpu" if opts.gpu < 0 else opts.gpu
    net = th.nn.Linear(4, 2)
    net.to(dev)
    opt = th.optim.Adam(net.parameters())
    for step in range(3):
        opt.zero_grad()
        net(th.randn(8, 4).to(dev)).sum().backward()
        opt.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    main(parser.parse_args())
"""
CPU_OR_INDEX_ALIASED_SAGEMAKER = """
import argparse

import torch as th
import torch_xla.core.xla_model as xm


def main(opts):
    dev = "cpu" if opts.gpu < 0 else opts.gpu
    net = th.nn.Linear(4, 2)
    net.to(dev)
    opt = th.optim.Adam(net.parameters())
    for step in range(3):
        opt.zero_grad()
        net(th.randn(8, 4).to(dev)).sum().backward()
        xm.optimizer_step(opt)
        xm.mark_step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    main(parser.parse_args())
"""
# The index makes a CUDA device (ported to the XLA device); a number that is no device is left alone.
INDEX_MADE_A_DEVICE = """
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=int, default=-1)
args = parser.parse_args()
device = torch.device("cuda", args.device) if args.device >= 0 else "cpu"
workers = args.device if args.device >= 0 else 0
model = torch.nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).sum().backward()
    optimizer.step()
"""
INDEX_MADE_A_DEVICE_PORTED = """
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=int, default=-1)
args = parser.parse_args()
device = torch_xla.device() if args.device >= 0 else "cpu"
workers = args.device if args.device >= 0 else 0
model = torch.nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).sum().backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""


def index_or_cpu_valid() -> tuple[Valid, ...]:
    return (valid(INDEX_MADE_A_DEVICE, INDEX_MADE_A_DEVICE_PORTED, note="an-index-made-a-cuda-device-or-the-cpu"),)


def index_or_cpu_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            INDEX_OR_CPU,
            INDEX_OR_CPU_PORTED,
            note="an-int-device-flag-or-the-cpu",
            findings=(
                Expected(
                    10,
                    10,
                    'ends on `args.device if args.device >= 0 else "cpu"` (`--device` defaults to `-1`), either the CPU '
                    "or a CUDA index",
                ),
            ),
        ),
        invalid(
            CPU_OR_INDEX_ALIASED,
            CPU_OR_INDEX_ALIASED_SAGEMAKER,
            target="sagemaker",
            note="the-cpu-or-an-int-device-flag-aliased-sagemaker",
            findings=(Expected(8, 11, '`"cpu" if opts.gpu < 0 else opts.gpu` (`--gpu` defaults to `0`)'),),
        ),
    )
