"""What the device rules that remove CUDA statements share: a statement under a guard that is
False on an XLA host, in a file with its own non-XLA path (it imports torch_xla conditionally),
stays (XLA106's set-device statements, XLA104's CUDA asserts): where the guard holds the
statement is right, and on an XLA host it never runs (loaded by the hooks: a rule module loads
no LibCST)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


def kept_off_xla(ctx: Context[Facts]) -> bool:
    """The statement being left stays: the file has its own non-XLA path, and the statement is
    in the body of an ``if`` that is False on an XLA host."""
    return ctx.facts.imports.xla_optional and _guarded_off_xla(ctx)


def _guarded_off_xla(ctx: Context[Facts]) -> bool:
    """The statement being left is in the body of an ``if`` that is False on an XLA host."""
    ancestors = ctx.ancestors
    for index in range(len(ancestors) - 2, -1, -1):
        node = ancestors[index]
        if isinstance(node, cst.If):
            return ancestors[index + 1] is node.body and never_on_xla(ctx.facts, node.test)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


def never_on_xla(facts: Facts, test: cst.BaseExpression) -> bool:
    """A guard that is False on an XLA host: a CUDA availability check, or a CUDA check of
    the device the file picked (``device.type == "cuda"``, XLA105's)."""
    device = facts.device
    return device.is_available_call(test) or device.false_on_xla(test)
