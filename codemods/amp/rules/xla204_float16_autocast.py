"""XLA204 float16-autocast: a float16 autocast whose device type comes from a value becomes
bfloat16 (XLA autocast runs in bfloat16); where XLA202 rewrites the whole call, its finding says
so instead.  XLA202's hook hands such a call to ``fix_dtype``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.targets import Api

if TYPE_CHECKING:
    import libcst as cst

    from codemods.amp.facts import AutocastCall
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

FLOAT16_AUTOCAST = Rule(
    code="XLA204",
    name="float16-autocast",
    severity="warning",
    summary="float16 autocast on XLA becomes bfloat16 (2.9 target)",
    fixable=True,
    why="XLA devices compute in bfloat16: TPUs do not support float16 autocast, and bfloat16 needs no loss scaling.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.float16):\n    loss = model(x)\n",
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.bfloat16):\n    loss = model(x)\n",
            findings=(Expected(2, 52, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=ptdtype)
            """,
            note="dtype-variable",
            target_only=True,
        ),
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch
            import torch_xla.amp

            ctx = torch_xla.amp.autocast(dtype=torch.float16)
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            findings=(Expected(3, 53, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
        invalid(
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.half)
            """,
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.bfloat16)
            """,
            alias=True,
            findings=(Expected(3, 54, "autocast dtype th.half -> th.bfloat16"),),
        ),
    ),
)


def fix_dtype(ctx: Context[Facts], updated: cst.Call, call: AutocastCall, new_args: dict[int, cst.Arg]) -> cst.Call:
    """``updated`` with its float16 ``dtype=`` made the target's autocast precision."""
    from codemods.amp.rules.edits import FLOAT16

    dtype = call.argument("dtype")
    if dtype is None or ctx.resolve(dtype) not in FLOAT16:
        return updated
    precision = ctx.target.autocast_dtype

    def build() -> cst.BaseExpression | None:
        return ctx.imports.expression(Api("torch", precision))  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; fix_dtype runs only when it takes one

    new = ctx.fix(
        FLOAT16_AUTOCAST, dtype, f"autocast dtype {ctx.code(dtype)} -> {{new}}: XLA autocast runs in {precision}", build
    )
    if new is None:
        return updated
    ctx.imports.discard(dtype)
    args = [
        new_args[id(arg)].with_changes(value=new) if name == "dtype" else new_args[id(arg)]
        for name, arg in call.arguments
    ]
    return updated.with_changes(args=args)
