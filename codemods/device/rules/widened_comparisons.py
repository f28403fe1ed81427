"""How XLA123 widens a comparison of a device string with "cuda" (the device values'
``widened_checks``, device/widened_checks.py): ``device == "cuda"`` -> ``device in ("cuda",
"xla")``, ``!=`` -> ``not in``, a listed "cuda" gains "xla", ``startswith("cuda")`` ->
``startswith(("cuda", "xla"))``."""

from __future__ import annotations

import libcst as cst

from codemods.engine.nodes import string_value

# The comparison shapes XLA123 reads and widens (also device/widened_checks.py's).
EQUALITY = (cst.Equal, cst.NotEqual)
MEMBERSHIP = (cst.In, cst.NotIn)
LISTED = (cst.Tuple, cst.List, cst.Set)


def widened(check: cst.BaseExpression) -> cst.BaseExpression | None:
    """``device == "cuda"`` -> ``device in ("cuda", "xla")``, ``!=`` -> ``not in``, a listed "cuda"
    gains "xla", ``startswith("cuda")`` -> ``startswith(("cuda", "xla"))``; None for another shape."""
    if type(check) is cst.Call:
        prefix = check.args[0].value
        if type(prefix) is cst.Tuple:
            return check.with_changes(args=[check.args[0].with_changes(value=_with_xla(prefix)), *check.args[1:]])
        if type(prefix) is not cst.SimpleString:
            return None
        pair = cst.Tuple([cst.Element(prefix), cst.Element(_xla_like(prefix))])
        return check.with_changes(args=[check.args[0].with_changes(value=pair), *check.args[1:]])
    if type(check) is not cst.Comparison:
        return None
    target = check.comparisons[0]
    operator, left, right = target.operator, check.left, target.comparator
    if type(operator) in MEMBERSHIP and type(right) in LISTED:
        return check.with_changes(comparisons=[target.with_changes(comparator=_with_xla(right))])
    if type(operator) not in EQUALITY:
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
