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
    bound = [
        node.value
        for node in walk(init)
        if type(node) in (cst.Assign, cst.AnnAssign, cst.AugAssign)
        and any(dotted(t) == holder for t in _targets_of(node))  # type: ignore[arg-type]  # narrowed by type()
    ]
    if len(bound) != 1 or type(bound[0]) is not cst.Name or bound[0].value not in parameters:  # type: ignore[union-attr]  # Name narrowed by type()
        return None
    name = bound[0].value  # type: ignore[union-attr]  # narrowed above
    return name, parameters.index(name)


def _targets_of(node: cst.Assign | cst.AnnAssign | cst.AugAssign) -> list[cst.BaseExpression]:
    return [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]  # type: ignore[union-attr]  # narrowed by type()


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
