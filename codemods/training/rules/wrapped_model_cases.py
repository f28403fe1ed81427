"""XLA302's cases for a loader handed, with a model that a function returns wrapped in
nn.DataParallel or in DDP with device_ids, to a function that feeds its batches to the model
without moving them: on CUDA the wrapper's forward moved them, on XLA nothing does."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_IMPORTS = "import torch\nimport torch.nn as nn\n"
_LOADER_IMPORT = "import torch_xla.distributed.parallel_loader as pl\n"
_RUNTIME_IMPORT = "import torch_xla.runtime as xr\n"
# The loader handed to the function that feeds its batches, and its port: wrapped in MpDeviceLoader.
_HANDED = "    train_epoch(loader, "
_HANDED_WRAPPED = "    train_epoch(pl.MpDeviceLoader(loader, torch_xla.device()), "


def _sampled(torch: str) -> tuple[str, str]:
    """The loader's arguments, and the sampler the port gives the training data under DDP."""
    return "batch_size=8)", (
        f"batch_size=8, sampler={torch}.utils.data.distributed.DistributedSampler(dataset, "
        "num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False))"
    )


WRAPPED_MODEL_HANDED = f"""
{_IMPORTS}

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
{_HANDED}model, optimizer, device)
"""

WRAPPED_MODEL_HANDED_PORTED = substituted(
    WRAPPED_MODEL_HANDED,
    (_IMPORTS, _IMPORTS + "import torch_xla\nimport torch_xla.core.xla_model as xm\n" + _LOADER_IMPORT),
    ("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n        torch_xla.sync()\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
    (_HANDED, _HANDED_WRAPPED),
)

# DDP with device_ids, imported from the module that defines it, returned in a tuple.
DDP_MODEL_HANDED = f"""
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
{_HANDED}net, optimizer, rank)
"""

DDP_MODEL_HANDED_PORTED = substituted(
    DDP_MODEL_HANDED,
    ("as DDP\n", "as DDP\nimport torch_xla\n" + _LOADER_IMPORT + _RUNTIME_IMPORT),
    (".to(rank)", ".to(torch_xla.device())"),
    (", device_ids=[rank], output_device=rank)", ")"),
    ("        optimizer.step()\n", "        optimizer.step()\n        torch_xla.sync()\n"),
    ("net.parameters()", "net.to(torch_xla.device()).parameters()"),
    _sampled("th"),
    (_HANDED, _HANDED_WRAPPED),
)

# DDP without device_ids moved no inputs on CUDA either: nothing to say of the loop.
DDP_WITHOUT_DEVICE_IDS_HANDED = substituted(
    WRAPPED_MODEL_HANDED, ("nn.DataParallel(model)", "nn.parallel.DistributedDataParallel(model)")
)

DDP_WITHOUT_DEVICE_IDS_HANDED_PORTED = substituted(
    DDP_WITHOUT_DEVICE_IDS_HANDED,
    (_IMPORTS, _IMPORTS + "import torch_xla\n" + _RUNTIME_IMPORT),
    ("        optimizer.step()\n", "        optimizer.step()\n        torch_xla.sync()\n"),
    ('torch.device("cuda")', "torch_xla.device()"),
    _sampled("torch"),
)


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
