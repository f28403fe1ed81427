"""XLA208 scaler-not-needed: a gradient scaler that stays on under bfloat16 autocast costs a
host read per step for nothing: reported before and after the conversion alike (same text), so
lint on a converted file still says so.  Its hook runs on a scaler before XLA205's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

SCALER_NOT_NEEDED = Rule(
    code="XLA208",
    name="scaler-not-needed",
    severity="warning",
    summary="With bfloat16 autocast the gradient scaler is not needed (it syncs with the host every step)",
    fixable=False,
    why="Loss scaling exists for float16's narrow range (float16 needs it to train correctly); bfloat16 has "
    "float32's range. On torch_xla 2.9 `torch.amp.GradScaler('xla')` reads found_inf on the host at every "
    "`scaler.step`, with the sync-free optimizers too: measured with `xla-codemod doctor` on the converted "
    "fixtures/amp_recipe.py, one more graph run and one more transfer to the host per step (2 and 2 per step, "
    "against 1 and 1 with `enabled=False`). Reported on the converted script as well (lint), until the scaler is "
    "removed or disabled. Not on the sagemaker target, which keeps the script's float16.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n",
            'import torch\nimport torch_xla\nscaler = torch.amp.GradScaler("xla")\n',
            findings=(Expected(3, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
            """,
            """
            import torch
            import torch_xla

            dtype = 'bfloat16'
            scaler = torch.amp.GradScaler("xla", enabled=(dtype == 'float16'))
            """,
            note="enabled-for-float16-only",
        ),
        valid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler()
            """,
            target="sagemaker",
            note="sagemaker-float16",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla", enabled=amp_dtype == torch.float16)
            off = torch.amp.GradScaler("xla", enabled=False)
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-scaler-enabled-for-float16-only-or-off",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.float16):
                loss = model(x)
            """,
            note="float16-on-xla-needs-its-scaler",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
            findings=(Expected(4, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('cuda')
            """,
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('xla')
            """,
            alias=True,
            findings=(Expected(5, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.amp.syncfree as syncfree

            optimizer = syncfree.AdamW(model.parameters())
            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-script-still-reported",
            findings=(
                Expected(
                    6,
                    10,
                    "with bfloat16 autocast the gradient scaler is not needed, and its step reads found_inf "
                    "on the host every iteration (on torch_xla 2.9, with the sync-free optimizers too: one more "
                    "graph run and a transfer to the host per step)",
                ),
            ),
        ),
    ),
)


@on_facts(SCALER_NOT_NEEDED, nodes=lambda facts: facts.amp.scalers)
def _scaler_cost(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.amp.rules.edits import FLOAT16
    from codemods.engine.nodes import is_false

    target = ctx.target
    amp = ctx.facts.amp
    if target.autocast_dtype is None or original in amp.precision_scalers:
        return updated  # the sagemaker target keeps the script's float16, which needs the scaler
    scaler = amp.scalers[original]
    enabled = next((a.value for a in scaler.arguments if a.keyword is not None and a.keyword.value == "enabled"), None)
    if is_false(enabled) or (enabled is not None and _names_a_precision(enabled)):
        return updated
    if any(
        call.flavor == "xla"
        and call.spelling in ("torch", "torch_xla")
        and ctx.resolve(call.argument("dtype")) in FLOAT16
        for call in amp.autocasts.values()
    ):
        return updated  # float16 autocast on XLA, kept by the script: it needs its scaler
    ctx.report(
        SCALER_NOT_NEEDED,
        original,
        f"with {target.autocast_dtype} autocast the gradient scaler is not needed, and its step reads found_inf on "
        f"the host every iteration (on torch_xla {target.torch_xla_version}, with the sync-free optimizers too: one "
        "more graph run and a transfer to the host per step): remove it, or pass enabled=False",
    )
    return updated


_PRECISIONS = frozenset({"float16", "bfloat16", "half"})


def _names_a_precision(value: cst.BaseExpression) -> bool:
    """``enabled=(dtype == 'float16')``, ``enabled=amp_dtype is torch.float16``: the scaler
    is on for one precision only."""
    import libcst as cst

    from codemods.engine.nodes import string_value, walk

    nodes = walk(value)
    return any(type(n) is cst.Comparison for n in nodes) and any(
        string_value(n) in _PRECISIONS or (type(n) is cst.Attribute and n.attr.value in _PRECISIONS) for n in nodes
    )
