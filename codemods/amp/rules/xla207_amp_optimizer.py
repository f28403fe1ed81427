"""XLA207 amp-optimizer: under the gradient scaler an optimizer with no sync-free version reads
found_inf on the host every step (reported where the scaler skips on the device: 2.9); a sync-free
one that gets unpacked keywords may get CUDA kernel options (reported before XLA206 ports it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

AMP_OPTIMIZER = Rule(
    code="XLA207",
    name="amp-optimizer",
    severity="warning",
    summary="An optimizer under AMP that cannot become sync-free (no such version, or unpacked kernel keywords)",
    fixable=False,
    why="Under torch_xla 1.13's gradient scaler (sagemaker target), an optimizer without a sync-free version makes "
    "every step wait for the device to report whether gradients overflowed. On torch_xla 2.9 the scaler reads "
    "that on the host whatever the optimizer, so a missing sync-free version costs nothing more there (XLA208 "
    "reports the scaler); unpacked keywords are reported on both targets.",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\noptimizer = torch.optim.RMSprop(model.parameters())\n",
            "import torch\nimport torch_xla.amp\nscaler = torch_xla.amp.GradScaler()\n"
            "optimizer = torch.optim.RMSprop(model.parameters())\n",
            target="sagemaker",
            findings=(Expected(4, 13, "`RMSprop` has no sync-free version"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.RMSprop(model.parameters())
            """,
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.cuda.amp.GradScaler(enabled=False)
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla", enabled=False)
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            note="2.9-scaler-syncs-whatever-the-optimizer",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler()
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            target="sagemaker",
            findings=(Expected(5, 13, "`RMSprop` has no sync-free version"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch.optim as O

            scaler = torch.cuda.amp.GradScaler(enabled=False)
            optimizer = O.AdamW(groups, **extra_args)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.amp.syncfree as syncfree

            scaler = torch.amp.GradScaler("xla", enabled=False)
            optimizer = syncfree.AdamW(groups, **extra_args)
            """,
            note="unpacked-kwargs",
            alias=True,
            findings=(Expected(6, 13, "`O.AdamW` gets unpacked keywords"),),
        ),
    ),
)


@on_facts(AMP_OPTIMIZER, nodes=lambda facts: facts.amp.other_optimizers)
def _no_syncfree_version(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    # Where the scaler reads found_inf on the host whatever the optimizer (sagemaker), XLA208 says so.
    if ctx.target.scaler_skips_on_device:
        ctx.report(
            AMP_OPTIMIZER,
            original,
            f"`{ctx.facts.amp.other_optimizers[original]}` has no sync-free version: under the gradient scaler its "
            "step reads found_inf on the host every iteration; prefer SGD, Adam or AdamW (torch_xla.amp.syncfree)",
        )
    return updated


@reports_facts(AMP_OPTIMIZER, nodes=lambda facts: [call for call, o in facts.amp.syncfree.items() if o.unpacked])
def _unpacked_keywords(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}` gets unpacked keywords: the sync-free {ctx.facts.amp.syncfree[original].name} "
        "runs on XLA tensors, which take no fused/foreach/capturable kernels; make sure they are not set"
    )
