"""XLA116's cases for inputs that a wrapper the port unwraps used to move: nn.DataParallel
scattered every tensor of its inputs to the GPUs (also inside lists, tuples and dicts)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# A batch element and a CPU tensor that only DataParallel's scatter moved.
SCATTERED_INPUTS = """
import torch
import torch.nn as nn


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)

    def forward(self, inputs, scale=1.0):
        img, annot = inputs
        return ((self.backbone(img) - annot[:, :4]) ** 2).mean() * scale


def train(loader, epochs):
    model = nn.DataParallel(Det()).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for data in loader:
            loss = model([data["img"].cuda().float(), data["annot"]], 0.5)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        noise = torch.randn(8, 5)
        print(model((torch.randn(8, 4).cuda(), noise)).item())
"""


SCATTERED_INPUTS_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)

    def forward(self, inputs, scale=1.0):
        img, annot = inputs
        return ((self.backbone(img) - annot[:, :4]) ** 2).mean() * scale


def train(loader, epochs):
    model = Det().to(torch_xla.device())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for data in loader:
            loss = model([data["img"].to(torch_xla.device()).float(), data["annot"]], 0.5)
            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        noise = torch.randn(8, 5)
        print(model((torch.randn(8, 4).to(torch_xla.device()), noise)).item())
"""


# Every tensor moved by the script (a name bound to a move, a move in the call), and numbers.
MOVED_INPUTS = """
import torch
import torch.nn as nn


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)

    def forward(self, inputs, scale=1.0, tag=None):
        img, annot = inputs
        return ((self.backbone(img) - annot[:, :4]) ** 2).mean() * scale


model = nn.DataParallel(Det()).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    img, annot = torch.randn(8, 4), torch.randn(8, 5).cuda()
    scale = 0.5
    loss = model([img.cuda(), annot], scale, tag="train")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
for img, annot in loader:
    img, annot = img.cuda(), annot.cuda()
    print(model((img, annot), step).item())
"""


MOVED_INPUTS_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)

    def forward(self, inputs, scale=1.0, tag=None):
        img, annot = inputs
        return ((self.backbone(img) - annot[:, :4]) ** 2).mean() * scale


model = Det().to(torch_xla.device())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    img, annot = torch.randn(8, 4), torch.randn(8, 5).to(torch_xla.device())
    scale = 0.5
    loss = model([img.to(torch_xla.device()), annot], scale, tag="train")
    optimizer.zero_grad()
    loss.backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
for img, annot in loader:
    img, annot = img.to(torch_xla.device()), annot.to(torch_xla.device())
    print(model((img, annot), step).item())
"""


# A batch that only DDP(device_ids=[rank]) moved: the port drops device_ids.
DDP_MOVED_INPUTS = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank, loader):
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(4, 2).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y.cuda(rank)) ** 2).mean().backward()
        optimizer.step()
"""


DDP_MOVED_INPUTS_PORTED = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


def main(rank, loader):
    dist.init_process_group("xla", init_method="xla://")
    model = DDP(nn.Linear(4, 2).to(torch_xla.device()))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y.to(torch_xla.device())) ** 2).mean().backward()
        optimizer.step()
        torch_xla.sync()
"""


DDP_MOVED_INPUTS_SAGEMAKER = """
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
import os
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


def main(rank, loader):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
    model = DDP(nn.Linear(4, 2).to(xm.xla_device()))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        ((model(x) - y.to(xm.xla_device())) ** 2).mean().backward()
        optimizer.step()
        xm.mark_step()
"""


# Batches a loop hands to a trainer's step method, which gives parts of them to the model.
HANDED_BATCHES = """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, net):
        self.model = nn.DataParallel(net).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, batch):
        images, targets, names = batch
        loss = self.model({"x": images.cuda(), "y": targets, "names": names})
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self, loader):
        for batch in loader:
            self.step(batch)
        for images, targets in loader:
            print(self.model({"x": images.cuda(), "y": targets}).item())
"""


HANDED_BATCHES_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, net):
        self.model = nn.DataParallel(net).to(torch_xla.device())
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, batch):
        images, targets, names = batch
        loss = self.model({"x": images.to(torch_xla.device()), "y": targets, "names": names})
        self.optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(self.optimizer)

    def fit(self, loader):
        for batch in loader:
            self.step(batch)
            torch_xla.sync()
        for images, targets in loader:
            print(self.model({"x": images.to(torch_xla.device()), "y": targets}).item())
"""


# Batches that a removed wrapper's scatter did not have to move: a project iterator given the
# device moves the stream itself (not reported).
ITERATOR_GIVEN_THE_DEVICE = """
import torch
import torch.nn as nn


class StreamIterator:
    def __init__(self, data, batch_size, device):
        self.data = data.to(device)
        self.batch_size = batch_size

    def __iter__(self):
        for i in range(0, self.data.size(0) - 1, self.batch_size):
            yield self.data[i:i + self.batch_size], self.data[i + 1:i + 1 + self.batch_size]


def train(model, tokens, loader, device):
    para_model = nn.DataParallel(model).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for data, target in StreamIterator(tokens, 8, device=device):
        loss = (para_model(data) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, tokens, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train(model, tokens, loader, device)
"""


ITERATOR_GIVEN_THE_DEVICE_PORTED = """
import torch
import torch_xla
import torch_xla.core.xla_model as xm


class StreamIterator:
    def __init__(self, data, batch_size, device):
        self.data = data.to(device)
        self.batch_size = batch_size

    def __iter__(self):
        for i in range(0, self.data.size(0) - 1, self.batch_size):
            yield self.data[i:i + self.batch_size], self.data[i + 1:i + 1 + self.batch_size]


def train(model, tokens, loader, device):
    para_model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for data, target in StreamIterator(tokens, 8, device=device):
        loss = (para_model(data) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()


def main(model, tokens, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    train(model, tokens, loader, device)
"""


# A DataLoader handed in to an evaluation loop: the port wraps only training loops' loaders, so
# its batches reach the unwrapped model on the CPU (reported).
HANDED_TO_AN_EVALUATION = """
import torch
import torch.nn as nn


def evaluate(model, loader, device):
    para_model = nn.DataParallel(model).to(device)
    for crops in loader:
        print(para_model(crops).sum().item())


def main(model, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    evaluate(model, loader, device)
"""


HANDED_TO_AN_EVALUATION_PORTED = """
import torch


def evaluate(model, loader, device):
    para_model = model.to(device)
    for crops in loader:
        print(para_model(crops).sum().item())


def main(model, dataset, device):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    evaluate(model, loader, device)
"""


# A model that a function of the file returns wrapped in DDP with device_ids (or DataParallel): the
# loop of its caller moves the targets and hands the inputs to it unmoved, as the wrapper moved them.
WRAPPED_BY_A_FUNCTION = """
import torch
import torch.nn as nn


def make_parallel(model, rank):
    model.to(rank)
    return nn.parallel.DistributedDataParallel(model, device_ids=[rank])


def main(loader, rank):
    model = make_parallel(nn.Linear(4, 2), rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, targets in loader:
        targets = targets.to(rank)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
"""

WRAPPED_BY_A_FUNCTION_PORTED = """
import torch
import torch.nn as nn
import torch_xla


def make_parallel(model, rank):
    model.to(torch_xla.device())
    return nn.parallel.DistributedDataParallel(model)


def main(loader, rank):
    model = make_parallel(nn.Linear(4, 2), rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, targets in loader:
        targets = targets.to(torch_xla.device())
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
"""

WRAPPED_BY_A_FUNCTION_ALIASED = """
import torch as th
from torch.nn import DataParallel as DP


def make_parallel(model, device):
    model = DP(model.to(device))
    return model


def main(dataset):
    device = th.device("cuda")
    net = make_parallel(th.nn.Linear(4, 2), device)
    optimizer = th.optim.SGD(net.parameters(), lr=0.1)
    loader = th.utils.data.DataLoader(dataset, batch_size=8)
    for inputs, targets in loader:
        loss = th.nn.functional.cross_entropy(net(inputs), targets.to(device))
        loss.backward()
        optimizer.step()
"""

WRAPPED_BY_A_FUNCTION_ALIASED_PORTED = """
import torch as th
from torch.nn import DataParallel as DP
import torch_xla
import torch_xla.core.xla_model as xm


def make_parallel(model, device):
    model = DP(model.to(device))
    return model


def main(dataset):
    device = torch_xla.device()
    net = make_parallel(th.nn.Linear(4, 2), device)
    optimizer = th.optim.SGD(net.parameters(), lr=0.1)
    loader = th.utils.data.DataLoader(dataset, batch_size=8)
    for inputs, targets in loader:
        loss = th.nn.functional.cross_entropy(net(inputs), targets.to(device))
        loss.backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync()
"""

MOVED_BESIDE_A_FUNCTION_WRAP = """
import torch
import torch.nn as nn


def make_parallel(model, rank):
    model.to(rank)
    return nn.parallel.DistributedDataParallel(model, device_ids=[rank])


def main(loader, rank):
    model = make_parallel(nn.Linear(4, 2), rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, targets in loader:
        inputs, targets = inputs.to(rank), targets.to(rank)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
"""

MOVED_BESIDE_A_FUNCTION_WRAP_PORTED = """
import torch
import torch.nn as nn
import torch_xla


def make_parallel(model, rank):
    model.to(torch_xla.device())
    return nn.parallel.DistributedDataParallel(model)


def main(loader, rank):
    model = make_parallel(nn.Linear(4, 2), rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs, targets in loader:
        inputs, targets = inputs.to(torch_xla.device()), targets.to(torch_xla.device())
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
"""


# A removed DataParallel beside a loop that moves only the targets: one finding at the forward.
REMOVED_WRAPPER_TARGETS_MOVED = """
import torch
import torch.nn as nn

device = torch.device("cuda")
model = nn.Linear(4, 2).to(device)
model = nn.DataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(dataset, batch_size=8)
for inputs, targets in loader:
    targets = targets.to(device)
    loss = nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
"""

REMOVED_WRAPPER_TARGETS_MOVED_PORTED = """
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(dataset, batch_size=8)
for inputs, targets in loader:
    targets = targets.to(device)
    loss = nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""


def scattered_input_valid() -> tuple[Valid, ...]:
    return (
        valid(MOVED_INPUTS, MOVED_INPUTS_PORTED, note="data-parallel-inputs-the-script-moves"),
        valid(
            ITERATOR_GIVEN_THE_DEVICE, ITERATOR_GIVEN_THE_DEVICE_PORTED, note="batches-of-an-iterator-given-the-device"
        ),
        valid(
            MOVED_BESIDE_A_FUNCTION_WRAP,
            MOVED_BESIDE_A_FUNCTION_WRAP_PORTED,
            note="inputs-moved-beside-a-wrap-a-function-returns",
        ),
    )


def scattered_input_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            HANDED_TO_AN_EVALUATION,
            HANDED_TO_AN_EVALUATION_PORTED,
            note="a-loader-handed-in-to-an-evaluation",
            findings=(Expected(7, 15, "`crops` reaches `para_model` on the CPU"),),
        ),
        invalid(
            HANDED_TO_AN_EVALUATION,
            HANDED_TO_AN_EVALUATION_PORTED,
            target="sagemaker",
            note="a-loader-handed-in-to-an-evaluation-sagemaker",
            findings=(Expected(7, 15, "`crops` reaches `para_model` on the CPU"),),
        ),
        invalid(
            SCATTERED_INPUTS,
            SCATTERED_INPUTS_PORTED,
            note="inputs-only-data-parallel-moved",
            findings=(
                Expected(
                    22,
                    20,
                    '`data["annot"]` reaches `model` on the CPU: `nn.DataParallel` scattered every tensor of its '
                    "inputs to the GPUs, and the port removes it",
                ),
                Expected(28, 15, "`noise` reaches `model` on the CPU"),
            ),
        ),
        invalid(
            DDP_MOVED_INPUTS,
            DDP_MOVED_INPUTS_PORTED,
            note="a-batch-only-ddp-device-ids-moved",
            findings=(
                Expected(
                    14,
                    11,
                    "`x` reaches `model` on the CPU: `DDP` moved every tensor of its inputs to the GPU of its "
                    "device_ids, which the port drops",
                ),
            ),
        ),
        invalid(
            DDP_MOVED_INPUTS,
            DDP_MOVED_INPUTS_SAGEMAKER,
            target="sagemaker",
            note="a-batch-only-ddp-device-ids-moved-sagemaker",
            findings=(Expected(18, 11, "move it to the device first if it is a tensor (`x.to(device)`)"),),
        ),
        invalid(
            REMOVED_WRAPPER_TARGETS_MOVED,
            REMOVED_WRAPPER_TARGETS_MOVED_PORTED,
            note="inputs-only-a-removed-data-parallel-moved-one-finding",
            findings=(
                Expected(
                    12,
                    40,
                    "`inputs` reaches `model` on the CPU: `nn.DataParallel` scattered every tensor of its inputs "
                    "to the GPUs, and the port removes it",
                ),
            ),
        ),
        invalid(
            WRAPPED_BY_A_FUNCTION,
            WRAPPED_BY_A_FUNCTION_PORTED,
            note="inputs-only-a-wrap-a-function-returns-moved",
            findings=(
                Expected(
                    16,
                    44,
                    "`inputs` reaches `model` on the CPU: `make_parallel()` (in this file) returns it wrapped in "
                    "`nn.parallel.DistributedDataParallel`, whose forward moved them to the GPU of its device_ids on "
                    "CUDA; the port drops device_ids (XLA604), and without them it moves no inputs",
                ),
            ),
        ),
        invalid(
            WRAPPED_BY_A_FUNCTION_ALIASED,
            WRAPPED_BY_A_FUNCTION_ALIASED_PORTED,
            note="inputs-only-a-data-parallel-a-function-returns-moved-aliased",
            alias=True,
            findings=(
                Expected(
                    18,
                    47,
                    "`inputs` reaches `net` on the CPU: `make_parallel()` (in this file) returns it wrapped in `DP`, "
                    "whose forward scattered them to the GPUs on CUDA; without CUDA devices it calls the model directly",
                ),
            ),
        ),
        invalid(
            HANDED_BATCHES,
            HANDED_BATCHES_PORTED,
            note="batches-handed-to-a-step-method",
            findings=(
                Expected(14, 16, "`targets`, `names` reach `self.model` on the CPU"),
                Expected(24, 19, "`targets` reaches `self.model` on the CPU"),
            ),
        ),
    )
