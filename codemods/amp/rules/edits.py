"""What the amp rules' hooks build: argument lists, strings replaced (loaded by the hooks: a rule
module loads no LibCST)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from codemods.engine.nodes import KEYWORD_EQUAL, quoted_like, string_value

if TYPE_CHECKING:
    from codemods.engine.rewriter import AssignmentT, Context
    from codemods.engine.rule import Rule

# An empty string literal: a ``quoted_like`` model where the call has no device string of its own.
EMPTY_STRING = cst.SimpleString('""')
FLOAT16 = frozenset({"torch.float16", "torch.half"})


def updated_args(original: cst.Call, updated: cst.Call) -> dict[int, cst.Arg]:
    """The updated form of each original argument, by the original's id."""
    return {id(o): u for o, u in zip(original.args, updated.args)}


def as_keyword(arg: cst.Arg, name: str) -> cst.Arg:
    return arg if arg.keyword is not None else arg.with_changes(keyword=cst.Name(name), equal=KEYWORD_EQUAL)


def argument_list(args: Sequence[cst.Arg], like: cst.Call) -> list[cst.Arg]:
    """``args`` joined by commas; the list ends as ``like``'s did (a trailing comma or not)."""
    trailing = bool(like.args) and isinstance(like.args[-1].comma, cst.Comma)
    joined: list[cst.Arg] = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if not last and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif last and not trailing:
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        joined.append(arg)
    return joined


def replace_strings(node: cst.BaseExpression, old: str, new: str) -> cst.BaseExpression:
    """``node`` with every string literal ``old`` replaced by ``new`` (same quotes)."""
    return node.visit(_StringReplacer(old, new))  # type: ignore[return-value]  # _StringReplacer never removes or flattens a node, so visit() returns the expression


class _StringReplacer(cst.CSTTransformer):
    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.SimpleString:
        return quoted_like(updated_node, self.new) if string_value(updated_node) == self.old else updated_node


def fix_chosen_value(
    ctx: Context[Any],
    rule: Rule,
    original: AssignmentT,
    updated: AssignmentT,
    names: Mapping[cst.BaseExpression, str],
    message: Callable[[str, cst.BaseExpression], str],
    build: Callable[[cst.BaseExpression], cst.BaseExpression],
) -> AssignmentT:
    """The hook of an assignment whose value chooses by CUDA checks (``names``: each such value,
    by the name it is assigned to): its value as ``build`` makes it of the value so far, fixed
    with ``message`` (of the name and the original value) and the old value's findings
    forgotten (it is gone); the assignment as it is where it declares only (``x: T``) or its
    value is not one of ``names``."""
    value, chosen = original.value, updated.value
    if value is None or chosen is None:
        return updated
    name = names.get(value)
    if name is None:
        return updated
    new = ctx.fix(rule, value, message(name, value), lambda: build(chosen))
    if new is None:
        return updated
    ctx.forget_removed(value, chosen)
    return updated.with_changes(value=new)
