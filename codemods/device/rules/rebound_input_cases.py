"""XLA116's cases for an input of a wrapped model whose name the call's own assignment binds
again (``out, h = self.net(x, h)``, XMem's ``v16, hidden = self.XMem("encode_value", ..., hidden)``):
the call gets the value the name held before, a CPU tensor that DDP(device_ids=[...]) moved to
the GPU and nothing moves once the port drops device_ids (XLA604)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# A hidden state made on the host each pass and handed to the model with the batch it moved.
REBOUND_HIDDEN = """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, net, rank):
        self.net = nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[rank])
        self.opt = torch.optim.AdamW(self.net.parameters())

    def do_pass(self, data):
        x = data["rgb"].cuda()
        h = torch.zeros((x.shape[0], 4))
        out, h = self.net(x, h)
        out.sum().backward()
        self.opt.step()
"""

_PORTED = (
    ("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla\n"),
    ("net.cuda(), device_ids=[rank])", "net.to(torch_xla.device()))"),
    ('data["rgb"].cuda()', 'data["rgb"].to(torch_xla.device())'),
)
_SAGEMAKER = (
    ("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla.core.xla_model as xm\n"),
    ("net.cuda(), device_ids=[rank])", "net.to(xm.xla_device()))"),
    ('data["rgb"].cuda()', 'data["rgb"].to(xm.xla_device())'),
)

# The name rebound alone (``h = self.net(x, h)``).
REBOUND_ALONE = substituted(REBOUND_HIDDEN, ("out, h = self.net(x, h)\n        out.", "h = self.net(x, h)\n        h."))

# The same through aliases: ``th`` and ``DDP``, the state in a list.
REBOUND_ALIASED = """
import torch as th
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, rank):
    model = DDP(net.to(rank), device_ids=[rank])
    opt = th.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        state = th.zeros(x.shape[0], 4)
        out, state = model([x.to(rank), state])
        out.sum().backward()
        opt.step()
"""

# The state made on the device (or moved), then fed back as the model returns it: nothing to move.
REBOUND_ON_DEVICE = substituted(
    REBOUND_HIDDEN, ("h = torch.zeros((x.shape[0], 4))", "h = torch.zeros((x.shape[0], 4)).cuda()")
)
REBOUND_ON_DEVICE_PORTED = substituted(
    REBOUND_ON_DEVICE,
    *_PORTED,
    ("torch.zeros((x.shape[0], 4)).cuda()", "torch.zeros((x.shape[0], 4)).to(torch_xla.device())"),
)
# The model's own output fed back in a loop: on the device from the first call on.
FED_BACK = substituted(
    REBOUND_ON_DEVICE,
    ("        out, h = self.net(x, h)\n", "        for _ in range(3):\n            out, h = self.net(x, h)\n"),
)


def rebound_input_valid() -> tuple[Valid, ...]:
    return (
        valid(REBOUND_ON_DEVICE, REBOUND_ON_DEVICE_PORTED, note="an input moved, rebound by the call's assignment"),
        valid(
            FED_BACK,
            substituted(
                FED_BACK,
                *_PORTED,
                ("torch.zeros((x.shape[0], 4)).cuda()", "torch.zeros((x.shape[0], 4)).to(torch_xla.device())"),
            ),
            note="the model's output fed back to it in a loop",
        ),
        valid(
            REBOUND_ON_DEVICE,
            substituted(
                REBOUND_ON_DEVICE,
                *_SAGEMAKER,
                ("torch.zeros((x.shape[0], 4)).cuda()", "torch.zeros((x.shape[0], 4)).to(xm.xla_device())"),
            ),
            target="sagemaker",
            note="an input moved, rebound by the call's assignment (sagemaker)",
        ),
    )


def rebound_input_invalid() -> tuple[Invalid, ...]:
    reaches = (
        "`h` reaches `self.net` on the CPU: `nn.parallel.DistributedDataParallel` moved every tensor of its inputs "
        "to the GPU of its device_ids, which the port drops"
    )
    return (
        invalid(
            REBOUND_HIDDEN,
            substituted(REBOUND_HIDDEN, *_PORTED),
            note="a host input whose name the call's tuple assignment rebinds",
            findings=(Expected(14, 18, reaches),),
        ),
        invalid(
            REBOUND_ALONE,
            substituted(REBOUND_ALONE, *_PORTED),
            note="a host input whose name the call's assignment rebinds",
            findings=(Expected(14, 13, reaches),),
        ),
        invalid(
            REBOUND_HIDDEN,
            substituted(REBOUND_HIDDEN, *_SAGEMAKER),
            target="sagemaker",
            note="a host input whose name the call's tuple assignment rebinds (sagemaker)",
            findings=(Expected(14, 18, reaches),),
        ),
        invalid(
            REBOUND_ALIASED,
            substituted(
                REBOUND_ALIASED,
                ("as DDP\n", "as DDP\nimport torch_xla\n"),
                ("net.to(rank), device_ids=[rank])", "net.to(torch_xla.device()))"),
                ("x.to(rank)", "x.to(torch_xla.device())"),
                ("        opt.step()\n", "        opt.step()\n        torch_xla.sync()\n"),
            ),
            alias=True,
            note="a host input whose name the call's assignment rebinds, through aliases",
            findings=(Expected(11, 22, "`state` reaches `model` on the CPU: `DDP` moved every tensor"),),
        ),
    )
