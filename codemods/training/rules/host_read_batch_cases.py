"""XLA302's cases of a training loop that reads a part of its batch on the host before moving it
(``data, data_aug = data``, then ``data_aug.edge_index.numpy()``, then ``data_aug.to(device)``):
a device loader would move that part first and the read would fail ("can't convert xla:0 device
type tensor to numpy"), so the loop keeps its own moves and gets the barrier; a read after the move
(``.cpu().numpy()``) leaves the wrap standing."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# The batch unpacked in the loop, one part read on the host, edited, and only then moved.
GRAPH_PAIRS = """
import torch

device = torch.device("cuda")
model = Net().to(device)
opt = torch.optim.Adam(model.parameters())
for data in train_loader:
    data, data_aug = data
    data = data.to(device)
    edge_idx = data_aug.edge_index.numpy()
    keep = [n for n in range(8) if n in edge_idx[0]]
    data_aug.edge_index = torch.tensor(edge_idx[:, keep])
    data_aug = data_aug.to(device)
    loss = model(data, data_aug)
    loss.backward()
    opt.step()
"""

# The same through an alias of torch, the part read on the host moved in place.
_GRAPH_PAIRS_ALIASED = """
import torch as th

device = th.device("cuda")
model = Net().to(device)
opt = th.optim.Adam(model.parameters())
for graph, graph_aug in train_loader:
    graph = graph.to(device)
    edges = graph_aug.edge_index.detach().numpy()
    graph_aug.edge_index = th.tensor(edges[:, edges[0] != edges[1]])
    graph_aug.to(device)
    loss = model(graph, graph_aug)
    loss.backward()
    opt.step()
"""

_XLA_IMPORTS = "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
_PORTED = (
    ("import torch\n", f"import torch\n{_XLA_IMPORTS}"),
    ('torch.device("cuda")', "torch_xla.device()"),
    ("    opt.step()\n", "    xm.optimizer_step(opt)\n    torch_xla.sync()\n"),
)


def host_read_batch_valid() -> tuple[Valid, ...]:
    return (
        valid(
            GRAPH_PAIRS,
            substituted(GRAPH_PAIRS, *_PORTED),
            note="batch-part-read-on-the-host-before-its-move",
        ),
        valid(
            _GRAPH_PAIRS_ALIASED,
            substituted(
                _GRAPH_PAIRS_ALIASED,
                ("import torch as th\n", f"import torch as th\n{_XLA_IMPORTS}"),
                ('th.device("cuda")', "torch_xla.device()"),
                _PORTED[2],
            ),
            note="batch-part-read-on-the-host-before-its-move-aliased",
        ),
    )


def host_read_batch_invalid() -> tuple[Invalid, ...]:
    after_the_move = substituted(
        GRAPH_PAIRS,
        (
            "    edge_idx = data_aug.edge_index.numpy()\n",
            "    data_aug = data_aug.to(device)\n    edge_idx = data_aug.edge_index.cpu().numpy()\n",
        ),
    )
    return (
        invalid(
            after_the_move,
            substituted(
                after_the_move,
                ("import torch\n", f"import torch\n{_XLA_IMPORTS}import torch_xla.distributed.parallel_loader as pl\n"),
                _PORTED[1],
                ("for data in train_loader:", "for data in pl.MpDeviceLoader(train_loader, device):"),
                ("    opt.step()\n", "    xm.optimizer_step(opt)\n"),
            ),
            note="batch-part-read-on-the-host-after-its-move",
            findings=(
                Expected(
                    9, 13, "train_loader -> pl.MpDeviceLoader(train_loader, device): moves each batch to the device"
                ),
            ),
        ),
    )
