"""For the module classes whose ``__init__`` builds an optimizer over their own parameters
(XLA203): which class of a module it is, which of its constructor's flags skip it, and which
of its constructor's arguments hold the parameters it steps."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from codemods.engine.nodes import dotted, is_true, string_value, walk


def skipped_by(init: cst.FunctionDef, built: cst.Call) -> tuple[str, ...]:
    """The parameters of ``__init__`` whose truth returns before the statement that holds
    ``built`` (``if no_optim: return``)."""
    skips: list[str] = []
    for statement in init.body.body:
        if any(node is built for node in walk(statement)):
            break
        if (
            type(statement) is cst.If
            and type(statement.test) is cst.Name
            and statement.orelse is None
            and isinstance(statement.body, cst.IndentedBlock)
            and len(statement.body.body) == 1
            and type(line := statement.body.body[0]) is cst.SimpleStatementLine
            and type(line.body[0]) is cst.Return
        ):
            skips.append(statement.test.value)
    return tuple(skips)


def handed_in(init: cst.FunctionDef, holder: str) -> tuple[str, int] | None:
    """The parameter of ``__init__`` (name, index without ``self``) that ``holder`` is bound to
    there (``self.net = net``: "self.net" is ``net``), when that is its only binding."""
    parameters = [p.name.value for p in init.params.params][1:]
    bound: list[cst.BaseExpression | None] = []
    for node in walk(init):
        if isinstance(node, cst.Assign) and any(dotted(t.target) == holder for t in node.targets):
            bound.append(node.value)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and dotted(node.target) == holder:
            bound.append(node.value)
    value = bound[0] if len(bound) == 1 else None
    if not isinstance(value, cst.Name) or value.value not in parameters:
        return None
    return value.value, parameters.index(value.value)


def own_of(entries: Iterable[tuple[str, str, tuple[str, ...]]], cls: str) -> tuple[str | None, tuple[str, ...]]:
    """The optimizer attribute of ``cls`` among a module's own-optimizer classes, and what skips it."""
    return next(((attribute, skips) for name, attribute, skips in entries if name == cls), (None, ()))


def skips_it(call: cst.Call | None, skips: tuple[str, ...]) -> bool:
    """The constructor call passes True for a parameter that skips the optimizer:
    ``no_optim=True``, also in a dict literal it unpacks (``**{**config, "no_optim": True}``)."""
    if call is None or not skips:
        return False
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in skips and is_true(arg.value):
            return True
        if arg.star == "**" and type(arg.value) is cst.Dict:
            for element in arg.value.elements:
                if (
                    isinstance(element, cst.DictElement)
                    and string_value(element.key) in skips
                    and is_true(element.value)
                ):
                    return True
    return False
