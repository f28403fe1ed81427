"""Comparisons of a device string with "cuda" that the port widens (XLA123): the port writes
"xla" where the project wrote the "cuda" device string (XLA101: ``def __init__(self,
device="cuda")`` -> ``device="xla"``), and a helper that compares such a string with "cuda"
(LibRecommender's ``device_config``: ``if device == "cuda" and torch.cuda.is_available(): return
torch.device("cuda")``, which XLA104 makes ``if device == "cuda": return torch_xla.device()``)
would then take its CPU branch for every value the port wrote.  After the port "cuda" and "xla"
both name the accelerator, so the comparison accepts both: ``device in ("cuda", "xla")``.

Only a comparison whose name the file does not show holding the XLA device (the device facts'
``unproven_checks``), of the name itself (a string, not ``x.type`` nor ``str(x)``), where the run
may hand it a rewritten string: this file rewrites a "cuda" device string, or another file of the
run imports this one (the run converts it, and its "cuda" strings become "xla").  A file that
compares the name with an "xla" string already tells the two apart, and stays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import checked_for_cuda
from codemods.engine.nodes import dotted, method_name, string_value, walk

if TYPE_CHECKING:
    from codemods.facts import Facts

_EQUALITY = (cst.Equal, cst.NotEqual)
_MEMBERSHIP = (cst.In, cst.NotIn)
_LISTED = (cst.Tuple, cst.List, cst.Set)


def widened_candidates(facts: Facts) -> dict[cst.CSTNode, str]:
    """The unproven checks the port widens: the check -> the name it compares."""
    device = facts.device
    if not device.unproven_checks or not _rewritten_strings_reach(facts):
        return {}
    values = facts.device_values
    theirs = {*values.asserted_choices, *values.ported_comparisons}  # XLA114 ports these
    return {
        check: name
        for check, name in device.unproven_checks.items()
        if compared_string(check) == name and not any(node in theirs for node in walk(check))
    }


def _rewritten_strings_reach(facts: Facts) -> bool:
    """The run may hand this file's comparisons a string it rewrote from "cuda" to "xla"."""
    if facts.device.strings or facts.device.cuda_defaults:
        return True
    context = facts.project.context
    return context.converted() and context.imported_in_run()


def compared_string(check: cst.CSTNode) -> str | None:
    """The name a CUDA check compares as a string (``device == "cuda"``, ``device in ("cuda",
    "cpu")``, ``device.startswith("cuda")``): not ``x.type`` nor ``str(x)``, which XLA110 reads."""
    if checked_for_cuda(check) is None:
        return None
    if type(check) is cst.Call:
        return dotted(check.func.value) if type(check.func) is cst.Attribute else None
    if type(check) is not cst.Comparison:
        return None
    operator = type(check.comparisons[0].operator)
    left, right = check.left, check.comparisons[0].comparator
    if operator in _EQUALITY:
        operand = right if string_value(left) == "cuda" else left
    elif operator in _MEMBERSHIP and type(right) in _LISTED:
        operand = left
    else:
        return None
    name = dotted(operand)
    return None if name is None or name.endswith(".type") else name


def tells_xla_apart(module: cst.CSTNode | None, name: str) -> bool:
    """The file compares ``name`` with an "xla" string somewhere (``elif device == "xla":``)."""
    if module is None:
        return False
    for node in walk(module):
        if type(node) is cst.Comparison and len(node.comparisons) == 1:
            operands = [node.left, node.comparisons[0].comparator]
            if name in (dotted(o) for o in operands) and any(_names_xla(o) for o in operands):
                return True
        elif type(node) is cst.Call and method_name(node) == "startswith" and type(node.func) is cst.Attribute:
            if dotted(node.func.value) == name and any(_names_xla(a.value) for a in node.args):
                return True
    return False


def _names_xla(node: cst.BaseExpression) -> bool:
    if type(node) in _LISTED:
        return any(_names_xla(e.value) for e in node.elements)  # type: ignore[attr-defined]  # narrowed by type(...) in (...) above: mypy does not narrow on type()
    value = string_value(node) if type(node) is cst.SimpleString else None
    return value is not None and value.startswith("xla")


def widened(check: cst.BaseExpression) -> cst.BaseExpression | None:
    """``device == "cuda"`` -> ``device in ("cuda", "xla")``, ``!=`` -> ``not in``, a listed "cuda"
    gains "xla", ``startswith("cuda")`` -> ``startswith(("cuda", "xla"))``; None for another shape."""
    if type(check) is cst.Call:
        prefix = check.args[0].value
        if type(prefix) is cst.Tuple:
            return check.with_changes(args=[check.args[0].with_changes(value=_with_xla(prefix))])
        if type(prefix) is not cst.SimpleString:
            return None
        pair = cst.Tuple([cst.Element(prefix), cst.Element(_xla_like(prefix))])
        return check.with_changes(args=[check.args[0].with_changes(value=pair)])
    if type(check) is not cst.Comparison:
        return None
    target = check.comparisons[0]
    operator, left, right = target.operator, check.left, target.comparator
    if type(operator) in _MEMBERSHIP and type(right) in _LISTED:
        return check.with_changes(comparisons=[target.with_changes(comparator=_with_xla(right))])
    if type(operator) not in _EQUALITY:
        return None
    literal, operand = (left, right) if string_value(left) == "cuda" else (right, left)
    if type(literal) is not cst.SimpleString:
        return None
    choices = cst.Tuple([cst.Element(literal), cst.Element(_xla_like(literal))])
    member = cst.In() if type(operator) is cst.Equal else cst.NotIn()
    return cst.Comparison(
        left=operand,
        comparisons=[cst.ComparisonTarget(operator=member, comparator=choices)],
        lpar=check.lpar,
        rpar=check.rpar,
    )


def _with_xla(listed: cst.BaseExpression) -> cst.BaseExpression:
    elements = list(listed.elements)  # type: ignore[attr-defined]  # a tuple, list or set (the callers check)
    cuda = next(e.value for e in elements if string_value(e.value) == "cuda")
    last = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return listed.with_changes(elements=[*elements[:-1], last, cst.Element(_xla_like(cuda))])


def _xla_like(literal: cst.BaseExpression) -> cst.SimpleString:
    """ "xla" in the quotes of ``literal``."""
    quote = literal.value[0] if type(literal) is cst.SimpleString and literal.value[:1] in ("'", '"') else '"'
    return cst.SimpleString(f"{quote}xla{quote}")
