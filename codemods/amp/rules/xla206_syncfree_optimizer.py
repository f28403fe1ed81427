"""XLA206 syncfree-optimizer: under AMP, torch.optim SGD, Adam and AdamW become their sync-free
versions (torch_xla.amp.syncfree), without the CUDA/CPU kernel keywords XLA tensors cannot take."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SYNCFREE_OPTIMIZER = Rule(
    code="XLA206",
    name="syncfree-optimizer",
    severity="warning",
    summary="Under AMP, torch.optim SGD/Adam/AdamW become `torch_xla.amp.syncfree` versions",
    fixable=True,
    why="The sync-free optimizers take the scaler's found_inf as a device tensor, so under torch_xla 1.13's "
    "`torch_xla.amp.GradScaler` (sagemaker target) skipping a step does not stop the device to read a flag on "
    "the host (the AWS guide's advice for AMP on XLA). On torch_xla 2.9 they are not sync-free under the scaler: "
    "`torch.amp.GradScaler` hands found_inf only to optimizers that declare `_step_supports_amp_scaling`, which "
    "they do not, so it reads found_inf on the host at each step (`.item()`); they still step like torch.optim's "
    "there, and the finding says so. With bfloat16 autocast drop the scaler instead (XLA208).",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)\n",
            'import torch\nimport torch_xla.amp.syncfree as syncfree\nscaler = torch.amp.GradScaler("xla")\n'
            "optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)\n",
            findings=(Expected(4, 13, "torch.optim.AdamW -> syncfree.AdamW"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            """,
            note="no-amp",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
            """,
            """
            import torch
            import torch_xla.amp.syncfree as syncfree

            scaler = torch.amp.GradScaler("xla")
            optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)
            """,
            findings=(Expected(5, 13, "torch.optim.AdamW -> syncfree.AdamW"),),
        ),
        invalid(
            """
            import torch
            from torch.optim import SGD
            from torch import optim as O

            class Net(torch.nn.Module):
                def configure_optimizers(self):
                    return O.Adam(self.parameters()), SGD(self.parameters(), lr=0.1)

            with torch.cuda.amp.autocast():
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp.syncfree as syncfree

            class Net(torch.nn.Module):
                def configure_optimizers(self):
                    return syncfree.Adam(self.parameters()), syncfree.SGD(self.parameters(), lr=0.1)

            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(6, 16, "O.Adam -> syncfree.Adam"), Expected(6, 50, "SGD -> syncfree.SGD")),
        ),
    ),
)


@on_facts(SYNCFREE_OPTIMIZER, nodes=lambda facts: facts.amp.syncfree)
def _syncfree(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    from codemods.amp.rules.edits import argument_list, updated_args

    optimizer = ctx.facts.amp.syncfree[original]
    dropped = ", ".join(ctx.code(a).rstrip(",").strip() for a in optimizer.dropped)
    note = f" (without {dropped}: CUDA/CPU kernels)" if dropped else ""

    def build() -> cst.Call | None:
        func = ctx.imports.expression(ctx.target.api(f"syncfree_{optimizer.name}"))
        if func is None:
            return None
        ctx.imports.discard(original.func)
        new_args = updated_args(original, updated)
        kept = [new_args[id(a)] for a in original.args if a not in optimizer.dropped]
        for arg in optimizer.dropped:
            ctx.forget_removed(arg, new_args[id(arg)])
        return updated.with_changes(func=func, args=argument_list(kept, updated))

    if ctx.target.scaler_skips_on_device:
        what = "sync-free under the gradient scaler"
    else:
        what = (
            f"the AWS guide's AMP optimizer (on torch_xla {ctx.target.torch_xla_version} the gradient "
            "scaler still reads found_inf on the host at each step: it passes found_inf to no torch_xla optimizer)"
        )
    return ctx.fix_or_keep(
        updated,
        SYNCFREE_OPTIMIZER,
        original,
        f"{ctx.code(original.func)} -> {{new}}: {what}{note}",
        build,
        result=lambda call: call.func,
    )
