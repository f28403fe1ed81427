"""Steps taken only under ``if phase == "train":`` (a parameter compared with a constant): a
call that passes another constant for that parameter takes no step (``run("test")``)."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import dotted


def _constant(node: cst.BaseExpression) -> str | None:
    """A string or number literal, or a dotted name (``LoopPhase.TRAIN``): its text."""
    if isinstance(node, (cst.SimpleString, cst.Integer)):
        return node.value
    return dotted(node) if type(node) is cst.Attribute else None


def equality(test: cst.BaseExpression) -> tuple[str, str] | None:
    """``name == constant`` (either side): (name, the constant's text)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if type(target.operator) is not cst.Equal:
        return None
    left, right = test.left, target.comparator
    if type(right) is cst.Name:
        left, right = right, left
    if type(left) is not cst.Name:
        return None
    value = _constant(right)
    return (left.value, value) if value is not None else None


def branch_not_taken(call: cst.Call, params: list[str], guards: set[tuple[str, str]] | None) -> bool:
    """Every step of the callee is under ``if param == value:`` and ``call`` passes another
    constant for that parameter."""
    for param, value in guards or ():
        for index, arg in enumerate(call.args):
            if arg.star:
                return False
            named = arg.keyword.value if arg.keyword is not None else params[index] if index < len(params) else None
            if named == param:
                passed = _constant(arg.value)
                if passed is not None and passed != value:
                    return True
    return False
