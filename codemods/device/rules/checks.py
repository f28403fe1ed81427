"""What the hooks of the device rules that port a check share: whether the CUDA devices a
check picks are converted (XLA101-XLA103 on), why a check that asks for the accelerator stays, and
a comparison with "cuda" made with another
device type (loaded by the hooks: a rule module loads no LibCST)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.rules.xla103_integer_device import INTEGER_DEVICE
from codemods.engine.nodes import quoted_like, string_value
from codemods.engine.rewriter import Context


def devices_converted(ctx: Context[Any]) -> bool:
    """Dropping or porting a check only helps when the CUDA devices it picks are converted
    too; otherwise it would force CUDA on a machine without it."""
    return all(ctx.selection.enabled(rule.code) for rule in (CUDA_DEVICE, DOT_CUDA, INTEGER_DEVICE))


def kept_because(ctx: Context[Any], blocker: cst.CSTNode | None) -> str | None:
    """Why a check that asks whether a device or a tensor is the accelerator stays as it is
    (the code it guards also fails without CUDA, or the CUDA devices it picks stay); None
    where it can be ported."""
    if blocker is not None:
        return f"the code it guards also runs `{ctx.code(blocker)}`, which fails without CUDA"
    if not devices_converted(ctx):
        return "the CUDA devices it picks stay (XLA101-XLA103 are off or suppressed)"
    return None


def compared_with(updated: cst.Comparison, device_type: str) -> cst.Comparison:
    """The comparison with "cuda" made with ``device_type``."""

    def flip(operand: cst.BaseExpression) -> cst.BaseExpression:
        return quoted_like(operand, device_type) if string_value(operand) == "cuda" else operand

    comparison = updated.comparisons[0]
    return updated.with_changes(
        left=flip(updated.left), comparisons=[comparison.with_changes(comparator=flip(comparison.comparator))]
    )
