"""What the amp rules' hooks build: argument lists, strings replaced (loaded by the hooks: a rule
module loads no LibCST)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.engine.nodes import KEYWORD_EQUAL, quoted_like, string_value

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
