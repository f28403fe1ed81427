"""XLA209 precision-choice: a value that chooses the precision by CUDA checks (``dtype =
'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'``, False on XLA) is made to choose
the target's autocast precision (2.9: bfloat16; the sagemaker target keeps the script's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import AssignmentT, Context
    from codemods.facts import Facts

PRECISION_CHOICE = Rule(
    code="XLA209",
    name="precision-choice",
    severity="error",
    summary="A precision chosen by CUDA checks (`is_bf16_supported()`) becomes bfloat16 on XLA (2.9 target)",
    fixable=True,
    why="torch.cuda checks are False on an XLA machine, so a script that picks bfloat16 on a modern GPU would "
    "silently fall back to float16 (and switch its gradient scaler on).",
    examples=lambda: (
        Invalid(
            "import torch\ndtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
            "import torch\ndtype = 'bfloat16'\n",
            findings=(Expected(2, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
        valid(
            """
            import torch

            dtype = 'bfloat16' if args.bf16 else 'float16'
            """,
            note="no-cuda-check",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            """
            import torch

            dtype = 'bfloat16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            findings=(Expected(3, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
        invalid(
            """
            from torch.cuda import is_bf16_supported
            import torch as th

            amp_dtype = th.bfloat16 if is_bf16_supported() else th.float16
            """,
            """
            import torch as th

            amp_dtype = th.bfloat16
            """,
            alias=True,
            findings=(Expected(3, 13, "`amp_dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
)


@on_facts(PRECISION_CHOICE, nodes=lambda facts: facts.amp.choosing_assignments)
def _chosen_precision(ctx: Context[Facts], original: AssignmentT, updated: AssignmentT) -> AssignmentT:
    """The value assigned to a name that picks the precision: its CUDA checks folded True."""
    import libcst as cst

    from codemods.amp.rules.edits import fix_chosen_value
    from codemods.engine.nodes import fold_true

    amp = ctx.facts.amp
    precision = ctx.target.autocast_dtype
    if precision is None:
        return updated

    def fold(chosen: cst.BaseExpression) -> cst.BaseExpression:
        folded = fold_true(chosen, amp.is_precision_check)
        return cst.Name(str(folded)) if isinstance(folded, bool) else folded

    return fix_chosen_value(
        ctx,
        PRECISION_CHOICE,
        original,
        updated,
        amp.precision_choices,
        lambda name, _: (
            f"`{name}` chooses the precision by CUDA checks (False on XLA): {{new}}, "
            f"as XLA autocast runs in {precision}"
        ),
        fold,
    )
