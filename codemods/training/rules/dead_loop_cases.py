"""XLA303's cases for loops that need no barrier: one under ``if False:`` (``if 0:``), which never
runs, and one that reads each graph to the host with PyTorch Geometric's ``to_networkx``; and the
``else:`` of an ``if False:``, which always runs.  Kept apart from the rule so that its module
holds the rule, its messages and its hooks."""

from __future__ import annotations

import textwrap

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_DRAWN = textwrap.dedent(
    """
    import torch
    from torch_geometric.loader import DataLoader
    from torch_geometric.utils import to_networkx

    if False:
        for g in DataLoader(ds, batch_size=1):
            g = g.to(device)
            draw(g)
    if 0:
        for g in DataLoader(ds, batch_size=1):
            g = g.to(device)
            draw(g)
    for g in DataLoader(ds, batch_size=1):
        g = g.to(device)
        draw(to_networkx(g, node_attrs=["z"]))
    """
)

_ELSE = textwrap.dedent(
    """
    import torch
    from torch_geometric.loader import DataLoader

    if False:
        pass
    else:
        for g in DataLoader(ds, batch_size=1):
            g = g.to(device)
            total = total + model(g).sum()
    """
)


def dead_loop_valid() -> tuple[Valid, ...]:
    return (
        valid(_DRAWN, note="a loop under if False or if 0 never runs; a loop that reads each graph with to_networkx"),
        valid(
            substituted(
                _DRAWN,
                ("from torch_geometric.utils import to_networkx\n", "import torch_geometric.utils as pyg_utils\n"),
                ("draw(to_networkx(", "draw(pyg_utils.to_networkx("),
            ),
            target="sagemaker",
            note="the same, to_networkx through a module alias (sagemaker)",
        ),
    )


def dead_loop_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            _ELSE,
            substituted(
                _ELSE,
                ("import torch\n", f"import torch\n{module}\n"),
                ("model(g).sum()\n", f"model(g).sum()\n        {barrier}\n"),
            ),
            target=target,
            note=f"the else of an if False always runs ({target})",
            findings=(
                Expected(
                    11, 9, "evaluation loop over the device (no call in every iteration reads a value to the host"
                ),
            ),
        )
        for target, module, barrier in (
            ("2.9", "import torch_xla", "torch_xla.sync()"),
            ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.mark_step()"),
        )
    )
