"""A ``keyword=True`` argument that does not run on XLA (``fused=True``, ``sparse=True``) is removed;
any other value of it is reported (what XLA212's and XLA507's hooks share)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from codemods.engine.nodes import is_true, without_args

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule


def without_true_keyword(
    ctx: Context[Any], rule: Rule, original: cst.Call, updated: cst.Call, arg: cst.Arg, why: str, without: str
) -> cst.BaseExpression:
    """``updated`` without ``arg`` (``keyword=True``); any other value is reported."""
    code = ctx.code(arg).rstrip(",").strip()
    if not is_true(arg.value) or len(updated.args) != len(original.args):
        ctx.report(rule, arg, f"`{code}`: {why}; make sure it is False on XLA ({without})")
        return updated
    at = original.args.index(arg)
    return ctx.fix_or_keep(
        updated,
        rule,
        arg,
        f"removed `{code}`: {why}; {without}",
        lambda: updated.with_changes(args=without_args(list(updated.args), [at])),
    )
