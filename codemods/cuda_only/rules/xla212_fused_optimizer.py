"""XLA212 fused-optimizer: ``fused=True`` on a torch.optim optimizer is removed: the fused kernels
take CUDA and CPU tensors only (checked on torch_xla 2.9: ``RuntimeError: `fused=True` requires all
the params to be floating point Tensors of supported devices``); the default implementation
computes the same update."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

FUSED_OPTIMIZER = Rule(
    code="XLA212",
    name="fused-optimizer",
    severity="error",
    summary="`fused=True` on a torch.optim optimizer is removed: the fused kernels refuse XLA tensors",
    fixable=True,
    why="torch.optim's fused kernels take CUDA and CPU tensors only: on torch_xla 2.9 the first step raises "
    "`RuntimeError: fused=True requires all the params to be floating point Tensors of supported devices` "
    "(checked for SGD, Adam, AdamW; `foreach=True` and Adam's `capturable=True` run). Without it the optimizer "
    "computes the same update with its default implementation. A `fused=` value that is not a literal True "
    "is reported. (Under AMP the optimizer becomes sync-free and the keyword goes there: XLA206.)",
    examples=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
            """,
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            """,
            findings=(Expected(3, 60, "removed `fused=True`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=False, foreach=True)
            opt = FusedOptimizer(model.parameters(), fused=True)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), fused=True)
            sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
            """,
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
            sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
            """,
            findings=(Expected(3, 79, "removed `fused=True`"), Expected(4, 51, "make sure it is False on XLA")),
        ),
        invalid(
            """
            from torch import optim as O

            optimizer = O.Adam(params, fused=True)
            """,
            """
            from torch import optim as O

            optimizer = O.Adam(params)
            """,
            alias=True,
            findings=(Expected(3, 28, "removed `fused=True`"),),
        ),
    ),
)


_FUSED_ERROR = "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices"


@on_facts(FUSED_OPTIMIZER, nodes=lambda facts: facts.cuda_only.fused_optimizers)
def _fused(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    from codemods.cuda_only.rules.true_keywords import without_true_keyword

    return without_true_keyword(
        ctx,
        FUSED_OPTIMIZER,
        original,
        updated,
        ctx.facts.cuda_only.fused_optimizers[original],
        f"the fused kernel refuses XLA tensors ({_FUSED_ERROR})",
        "the default implementation computes the same update",
    )
