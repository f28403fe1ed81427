"""XLA713 dynamic-shape: an operation whose output shape depends on the data (``nonzero``,
``masked_select``, boolean masks, ``unique``) reads the host and compiles a graph per size.
Reported at the operation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.lazy.rules.programs import _loop

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DYNAMIC_SHAPE = Rule(
    code="XLA713",
    name="dynamic-shape",
    severity="warning",
    summary="An operation whose output shape depends on the data (nonzero, masked_select, boolean masks, unique)",
    fixable=False,
    why="XLA compiles for fixed shapes: the size is read to the host and each new size is a new graph.  "
    "Keep the shape: multiply by the mask (`(x * mask).sum() / mask.sum()`) or use torch.where(mask, x, 0).",
    examples=lambda: (
        Invalid(
            _loop("positive = x[x > 0]"),
            findings=(
                Expected(13, 16, "`x[x > 0]`: boolean-mask indexing has a data-dependent shape (a host read and a"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            labels = torch.tensor([0, 1, 1, 2])
            classes = torch.unique(labels)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                mask = (y > 0).float()
                loss = ((model(x) - y) ** 2 * mask).sum() / mask.sum()
                loss.backward()
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch.nn as nn


            class Head(nn.Module):
                def forward(self, x):
                    keep = th.nonzero(x > 0)
                    return x.unique()
            """,
            alias=True,
            findings=(Expected(7, 16, "`th.nonzero(x > 0)`"), Expected(8, 16, "`x.unique()`")),
        ),
        invalid(
            """
            import torch
            import torch.nn.functional as F
            import torch_xla

            for x, y in loader:
                x, y = x.to(device), y.to(device)
                pred = model(x)
                mask = y > 0
                loss = F.mse_loss(pred[mask], y[mask]) + torch.masked_select(pred, mask).sum() * 0
                idx = y.nonzero()
                loss.backward()
                torch_xla.sync()
            """,
            findings=(
                Expected(9, 23, "`pred[mask]`"),
                Expected(9, 35, "`y[mask]`: boolean-mask indexing has a data-dependent shape (a host read and a"),
                Expected(9, 46, "`torch.masked_select(pred, mask)`"),
                Expected(10, 11, "`y.nonzero()`"),
            ),
        ),
    ),
)


@reports_facts(DYNAMIC_SHAPE, nodes=lambda facts: facts.recompilation.dynamic_shapes)
def _dynamic_shape(ctx: Context[Facts], original: cst.CSTNode) -> str:
    return (
        f"`{ctx.code(original)}`: {ctx.facts.recompilation.dynamic_shapes[original]} has a data-dependent shape (a "
        "host read and a new graph per size); keep the shape: multiply by the mask, or torch.where(mask, x, 0)"
    )
