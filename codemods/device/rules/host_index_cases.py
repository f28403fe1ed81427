"""XLA116's cases for a CPU tensor indexed with a tensor on the XLA device (held-out list 23,
UltraGCN): a lookup table a module holds as a plain attribute, indexed in a method with an index
its own layer takes and the result moved (``self.table[idx].to(...)``), and a mask an evaluation
makes on the host, indexed with a batch it moved. CUDA accepts a CPU tensor indexed with CUDA
indices; torch_xla 2.9 raises (checked on PJRT_DEVICE=CPU)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

LOOKUP_TABLE = """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, table, weights):
        super().__init__()
        self.emb = nn.Embedding(100, 8)
        self.table = table
        self.weights = weights

    def forward(self, idx):
        w = self.table[idx].to(self.emb.weight.device)
        v = torch.mul(self.weights["user"][idx.flatten()], 2.0).to(idx.device)
        return (self.emb(idx).sum(-1) * w * v).sum()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Scorer(torch.rand(100), {"user": torch.rand(100)})
model = model.to(device)


def evaluate(users):
    mask = torch.zeros(100, 100)
    users = users.to(device)
    return model.emb(users).sum() + mask[users].sum()
"""
_PORTED = (
    ("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla\n"),
    ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "torch_xla.device()"),
)
_HANDED_MOVED = (
    ("Scorer(torch.rand(100),", "Scorer(torch.rand(100).to(device),"),
    ("mask[users]", "mask[users.cpu()]"),
)
_TABLE = "`self.table[idx]` indexes `self.table`, a tensor on the CPU (`self.table` is bound in `__init__` to `table`"
_MASK = "`mask[users]` indexes `mask`, a tensor on the CPU (made by `torch.zeros(...)` and never moved), with `users`"


# A count kept on the CPU and updated in place at device indices (a review's probe): the write
# ``mask[users] += 1`` binds nothing, so ``mask`` is still the CPU tensor made above.
_COUNTED = (
    (
        "    return model.emb(users).sum() + mask[users].sum()",
        "    mask[users] += 1\n    return model.emb(users).sum()",
    ),
)


def host_index_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            substituted(LOOKUP_TABLE, *_COUNTED),
            substituted(LOOKUP_TABLE, *_COUNTED, *_PORTED),
            note="a-cpu-count-updated-in-place-at-device-indices",
            findings=(
                Expected(14, 13, _TABLE),
                Expected(15, 23, '`self.weights["user"][idx.flatten()]`'),
                Expected(27, 5, _MASK),
            ),
        ),
        invalid(
            LOOKUP_TABLE,
            substituted(LOOKUP_TABLE, *_PORTED),
            note="a-cpu-lookup-table-of-the-module-and-a-cpu-mask-indexed-with-device-tensors",
            findings=(
                Expected(
                    14,
                    13,
                    f"{_TABLE}, handed to `Scorer(...)`, neither a Parameter nor a buffer), with `idx`, a tensor on "
                    "the XLA device: torch_xla raises RuntimeError (indices should be either on cpu or on the same "
                    "device as the indexed tensor), where CUDA accepts it; register it as a buffer "
                    '(`self.register_buffer("table", ...)`), which moves with the module, or move it to the device '
                    "once, or index with `idx.cpu()`",
                ),
                Expected(15, 23, '`self.weights["user"][idx.flatten()]` indexes `self.weights["user"]`'),
                Expected(
                    27,
                    37,
                    f"{_MASK}, a tensor on the XLA device: torch_xla raises RuntimeError (indices should be either "
                    "on cpu or on the same device as the indexed tensor), where CUDA accepts it; move it to the device "
                    "once (`mask = mask.to(device)`), or index with `users.cpu()`",
                ),
            ),
        ),
        invalid(
            substituted(
                LOOKUP_TABLE,
                ("import torch.nn as nn\n", "import torch.nn as nn\nfrom torch import zeros as Z\n"),
                ("mask = torch.zeros(100, 100)", "mask = Z(100, 100)"),
                ("model = model.to(device)", "model.cuda()"),
                ("users.to(device)", "users.cuda()"),
            ),
            substituted(
                LOOKUP_TABLE,
                (
                    "import torch.nn as nn\n",
                    "import torch.nn as nn\nfrom torch import zeros as Z\nimport torch_xla.core.xla_model as xm\n",
                ),
                ("mask = torch.zeros(100, 100)", "mask = Z(100, 100)"),
                ("model = model.to(device)", "model.to(xm.xla_device())"),
                ("users.to(device)", "users.to(xm.xla_device())"),
                ('torch.device("cuda" if torch.cuda.is_available() else "cpu")', "xm.xla_device()"),
            ),
            target="sagemaker",
            alias=True,
            note="moved-with-cuda-and-an-aliased-constructor-sagemaker",
            findings=(
                Expected(15, 13, _TABLE),
                Expected(16, 23, '`self.weights["user"][idx.flatten()]`'),
                Expected(28, 37, "`mask[users]` indexes `mask`, a tensor on the CPU (made by `torch.zeros(...)`"),
            ),
        ),
    )


def host_index_valid() -> tuple[Valid, ...]:
    return (
        valid(
            substituted(
                LOOKUP_TABLE,
                ("        self.table = table\n", '        self.register_buffer("table", table)\n'),
                (
                    "        self.weights = weights\n",
                    "        self.weights = {k: v.cuda() for k, v in weights.items()}\n",
                ),
                ('self.weights["user"][idx.flatten()]', 'self.weights["user"][idx.flatten().cpu()]'),
                ("    mask = torch.zeros(100, 100)\n", "    mask = torch.zeros(100, 100).to(device)\n"),
            ),
            substituted(
                LOOKUP_TABLE,
                *_PORTED,
                ("        self.table = table\n", '        self.register_buffer("table", table)\n'),
                (
                    "        self.weights = weights\n",
                    "        self.weights = {k: v.to(torch_xla.device()) for k, v in weights.items()}\n",
                ),
                ('self.weights["user"][idx.flatten()]', 'self.weights["user"][idx.flatten().cpu()]'),
                ("    mask = torch.zeros(100, 100)\n", "    mask = torch.zeros(100, 100).to(device)\n"),
            ),
            note="a-buffer-a-moved-dict-an-index-read-to-the-host-a-mask-moved",
        ),
        valid(
            substituted(
                LOOKUP_TABLE,
                ("model = model.to(device)", 'model = model.to("cpu")'),
                ("users.to(device)", 'users.to("cpu")'),
            ),
            substituted(
                LOOKUP_TABLE,
                *_PORTED,
                ("model = model.to(device)", 'model = model.to("cpu")'),
                ("users.to(device)", 'users.to("cpu")'),
            ),
            note="the-module-and-the-batch-kept-on-the-cpu",
        ),
        valid(
            substituted(LOOKUP_TABLE, *_HANDED_MOVED),
            substituted(LOOKUP_TABLE, *_PORTED, *_HANDED_MOVED),
            note="the-table-handed-to-the-module-moved",
        ),
    )
