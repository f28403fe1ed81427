"""XLA723 compile-backend: torch.compile with an explicit backend that is neither openxla nor a
CUDA one (which XLA721 replaces) is reported: XLA721's hook, which rewrites the call once, hands
such a backend to ``report_backend``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

COMPILE_BACKEND = Rule(
    code="XLA723",
    name="compile-backend",
    severity="warning",
    summary="torch.compile with an explicit backend that is not openxla",
    fixable=False,
    why="A backend other than openxla (`eager`, `aot_eager`, a custom function, one chosen by a variable) gets "
    "dynamo's graphs instead of XLA: eager backends run them op by op on the lazy XLA tensors (no compiled "
    "graph of dynamo's), backends written for CUDA fail. Inductor and cudagraphs are "
    "switched to openxla (XLA721); any other backend is the author's choice, so it is reported.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, backend=args.backend)
            """,
            findings=(Expected(3, 30, "`backend=args.backend` is not the openxla backend"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.compile(model, backend="openxla")
            """,
            target_only=True,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.compile(model, backend=args.compile_backend)
            debug = torch.compile(model, backend="aot_eager")
            """,
            findings=(
                Expected(3, 30, "`backend=args.compile_backend` is not the openxla backend"),
                Expected(4, 30, "aot_eager"),
            ),
        ),
        invalid(
            """
            from torch import compile

            model = compile(model, backend="eager")
            """,
            alias=True,
            findings=(Expected(3, 24, '`backend="eager"` is not the openxla backend'),),
        ),
    ),
)


def report_backend(ctx: Context[Facts], backend: cst.Arg, wanted: str) -> None:
    """``backend=...`` names a backend that does not compile for XLA (or one not known here)."""
    ctx.report(
        COMPILE_BACKEND,
        backend,
        f"`{ctx.code(backend)}` is not the openxla backend: dynamo's graphs go to it, not to XLA (on XLA "
        f'tensors eager backends run them op by op, CUDA ones fail); use backend="{wanted}" unless this '
        "backend is meant for XLA",
    )
