"""XLA302's cases for a loader handed, with a model that a function returns wrapped in
nn.DataParallel or in DDP with device_ids, to a function that feeds its batches to the model
without moving them: on CUDA the wrapper's forward moved them, on XLA nothing does."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

WRAPPED_MODEL_HANDED = """
import torch
import torch.nn as nn


def make_parallel(model, device):
    model.to(device)
    return nn.DataParallel(model)


def train_epoch(loader, model, optimizer, device):
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()


def main(dataset):
    device = torch.device("cuda")
    model = make_parallel(nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train_epoch(loader, model, optimizer, device)
"""

WRAPPED_MODEL_HANDED_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def make_parallel(model, device):
    model.to(device)
    return nn.DataParallel(model)


def train_epoch(loader, model, optimizer, device):
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()


def main(dataset):
    device = torch_xla.device()
    model = make_parallel(nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train_epoch(pl.MpDeviceLoader(loader, torch_xla.device()), model, optimizer, device)
"""

# DDP with device_ids, imported from the module that defines it, returned in a tuple.
DDP_MODEL_HANDED = """
import torch as th
from torch.nn.parallel.distributed import DistributedDataParallel as DDP


def setup(model, optimizer, rank):
    model.to(rank)
    model = DDP(model, device_ids=[rank], output_device=rank)
    return model, optimizer


def train_epoch(loader, model, optimizer, rank):
    for inputs, targets in loader:
        targets = targets.to(rank)
        loss = th.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()


def main(dataset, rank):
    net = th.nn.Linear(4, 2)
    optimizer = th.optim.SGD(net.parameters(), lr=0.1)
    net, optimizer = setup(net, optimizer, rank)
    loader = th.utils.data.DataLoader(dataset, batch_size=8)
    train_epoch(loader, net, optimizer, rank)
"""

DDP_MODEL_HANDED_PORTED = """
import torch as th
from torch.nn.parallel.distributed import DistributedDataParallel as DDP
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr


def setup(model, optimizer, rank):
    model.to(torch_xla.device())
    model = DDP(model)
    return model, optimizer


def train_epoch(loader, model, optimizer, rank):
    for inputs, targets in loader:
        targets = targets.to(torch_xla.device())
        loss = th.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


def main(dataset, rank):
    net = th.nn.Linear(4, 2)
    optimizer = th.optim.SGD(net.to(torch_xla.device()).parameters(), lr=0.1)
    net, optimizer = setup(net, optimizer, rank)
    loader = th.utils.data.DataLoader(dataset, batch_size=8, sampler=th.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False))
    train_epoch(pl.MpDeviceLoader(loader, torch_xla.device()), net, optimizer, rank)
"""

# DDP without device_ids moved no inputs on CUDA either: nothing to say of the loop.
DDP_WITHOUT_DEVICE_IDS_HANDED = """
import torch
import torch.nn as nn


def make_parallel(model, device):
    model.to(device)
    return nn.parallel.DistributedDataParallel(model)


def train_epoch(loader, model, optimizer, device):
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()


def main(dataset):
    device = torch.device("cuda")
    model = make_parallel(nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train_epoch(loader, model, optimizer, device)
"""

DDP_WITHOUT_DEVICE_IDS_HANDED_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.runtime as xr


def make_parallel(model, device):
    model.to(device)
    return nn.parallel.DistributedDataParallel(model)


def train_epoch(loader, model, optimizer, device):
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


def main(dataset):
    device = torch_xla.device()
    model = make_parallel(nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False))
    train_epoch(loader, model, optimizer, device)
"""


def wrapped_model_valid() -> tuple[Valid, ...]:
    return (
        valid(
            DDP_WITHOUT_DEVICE_IDS_HANDED,
            DDP_WITHOUT_DEVICE_IDS_HANDED_PORTED,
            note="handed-model-a-function-wraps-in-ddp-without-device-ids",
        ),
    )


def wrapped_model_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            WRAPPED_MODEL_HANDED,
            WRAPPED_MODEL_HANDED_PORTED,
            note="loader-handed-with-a-model-a-function-wraps-in-data-parallel",
            findings=(
                Expected(
                    27,
                    17,
                    "`train_epoch` (in this file) feeds the batches of its `loader` (`inputs`) to `model` without "
                    "moving them: `make_parallel()` (in this file) returns it wrapped in `nn.DataParallel`, whose "
                    "forward scattered them to the GPUs on CUDA",
                ),
            ),
        ),
        invalid(
            DDP_MODEL_HANDED,
            DDP_MODEL_HANDED_PORTED,
            note="loader-handed-with-a-model-a-function-wraps-in-ddp-with-device-ids-aliased",
            alias=True,
            findings=(
                Expected(
                    28,
                    17,
                    "`setup()` (in this file) returns it wrapped in `DDP`, whose forward moved them to the GPU of "
                    "its device_ids on CUDA; the port drops device_ids (XLA604)",
                ),
            ),
        ),
    )
