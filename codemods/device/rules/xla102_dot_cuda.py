"""XLA102 dot-cuda: ``x.cuda(...)`` becomes ``x.to(<the target's device>)``, its other keyword
arguments kept (the device facts' ``dot_cuda``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DOT_CUDA = Rule(
    code="XLA102",
    name="dot-cuda",
    severity="error",
    summary="`.cuda()` becomes `.to(<XLA device>)`",
    fixable=True,
    why="`.cuda()` moves a module or a tensor to a CUDA device and raises without one; `.to()` with the XLA "
    "device moves it there, keeping the other arguments.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            inputs = batch.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            inputs = batch.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 10, "batch.cuda(non_blocking=True) -> batch.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            use_gpu = torch.cuda.is_available()
            x = x.to("cpu")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            x = x.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            x = x.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 5, "x.cuda(non_blocking=True) -> x.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla as tx

            model.cuda()
            """,
            """
            import torch
            import torch_xla as tx

            model.to(tx.device())
            """,
            note="existing-torch_xla-alias",
            alias=True,
            findings=(Expected(4, 1, "model.cuda() -> model.to(tx.device())"),),
        ),
    ),
)


@on_facts(DOT_CUDA, nodes=lambda facts: facts.device.dot_cuda)
def _dot_cuda(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import with_comma

    func = updated.func
    if not isinstance(func, cst.Attribute):
        return updated

    def build() -> cst.Call | None:
        device = ctx.device()
        if device is None:
            return None
        kept = [a for a in updated.args if a.keyword is not None and a.keyword.value != "device"]
        for dropped in original.args:
            if dropped.keyword is None or dropped.keyword.value == "device":
                ctx.imports.discard(dropped)
        args = [with_comma(cst.Arg(device)), *kept] if kept else [cst.Arg(device)]
        if kept:  # the list ends as it did (a trailing comma or not)
            args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)

    return ctx.fix_or_keep(updated, DOT_CUDA, original, f"{ctx.code(original)} -> {{new}}", build)
