"""Optimizers kept in a list: filled by ``append`` (``self.optims.append(torch.optim.Adam(...))``)
or built as one (``[Adam(...), Adam(...)]``, ``[Adam(n.parameters()) for n in nets]``), then
stepped through a loop over it (``for opt in self.optims: opt.step()``): the loop's target is
known as an optimizer.  Such a loop inside a training loop is part of that loop's step (one
barrier per iteration of the outer loop, none per optimizer)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods import apis
from codemods.engine.nodes import dotted, method_name, receiver


def is_optimizer_class(callee: str) -> bool:
    return apis.is_optimizer_class(callee)


def _builds_optimizer(value: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    return type(value) is cst.Call and is_optimizer_class(resolve(value.func) or "")


def appended_to(node: cst.Call, resolve: Callable[[cst.BaseExpression], str | None]) -> str | None:
    """The list that ``node`` appends an optimizer it builds to (``self.optims``), or None."""
    if method_name(node) != "append" or len(node.args) != 1 or not _builds_optimizer(node.args[0].value, resolve):
        return None
    return dotted(receiver(node))


def lists_optimizers(value: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``value`` is a list (or tuple) of optimizers it builds, or a comprehension building one each."""
    if type(value) is cst.List or type(value) is cst.Tuple:
        elements = value.elements
        return bool(elements) and all(_builds_optimizer(element.value, resolve) for element in elements)
    return type(value) is cst.ListComp and _builds_optimizer(value.elt, resolve)
