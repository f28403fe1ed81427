"""Accelerator checks that guard only a move to the host: ``x.cpu() if torch.cuda.is_available()
else x``, ``if torch.cuda.is_available(): return x.cpu()`` then ``return x``, ``if
torch.cuda.is_available(): x = x.cpu()``.  On XLA the check is False, so the device tensor comes
back and a later ``.numpy()`` raises; an XLA tensor needs the move as much as a CUDA one, and on
the CPU it changes nothing (``.cpu()`` of a CPU tensor is the tensor).  The check goes, as it
does around the matching move to the device (``device.ifs``, ``device.selections``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import fold_true, method_name, string_value

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts


def mark(part: DeviceFacts, ifs: Mapping[cst.If, cst.FunctionDef | None], ifexps: Sequence[cst.IfExp]) -> None:
    """Add the checks of ``ifs`` (each with its enclosing function) and ``ifexps`` that guard
    only a move to the host to the device facts' folded checks."""
    checks = part.is_available_call
    for node, function in ifs.items():
        if (
            node not in part.ifs
            and node not in part.blocked_ifs
            and node not in part.unset_fallbacks
            and _guards_host_moves(node, function, checks)
        ):
            part.ifs.add(node)
            part.host_moves.add(node)
    for selection in ifexps:
        if selection not in part.selections and _always(selection.test, checks):
            if (moved := _unmoved(selection.body)) is not None and moved.deep_equals(selection.orelse):
                part.selections.add(selection)
                part.host_moves.add(selection)


def _always(test: cst.BaseExpression, checks: Callable[[cst.BaseExpression], bool]) -> bool:
    """The test is an accelerator check alone (True once the check holds)."""
    return fold_true(test, checks) is True


def _unmoved(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``expr`` without the moves to the host in its chain of calls (``x.cpu().float()`` ->
    ``x.float()``); None if it has none."""
    chain: list[cst.Call] = []  # the calls of the chain, outermost first
    node = expr
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        chain.append(node)
        node = node.func.value
    found = False
    for call in reversed(chain):
        if _moves_to_host(call):
            found = True
        else:
            node = call.with_changes(func=call.func.with_changes(value=node))
    return node if found else None


def _moves_to_host(call: cst.Call) -> bool:
    """``.cpu()``, ``.to("cpu")``."""
    method = method_name(call)
    if method == "cpu":
        return not call.args
    return method == "to" and len(call.args) == 1 and string_value(call.args[0].value) == "cpu"


def _guards_host_moves(
    node: cst.If, function: cst.FunctionDef | None, checks: Callable[[cst.BaseExpression], bool]
) -> bool:
    """``if <check>:`` whose body only moves to the host: ``x = x.cpu()`` (no else), or
    ``return x.cpu()`` where the path without it returns ``x`` (its else, or the statement after
    the ``if`` in the function's body)."""
    if not _always(node.test, checks) or type(node.body) is not cst.IndentedBlock:
        return False
    lines = [line for line in node.body.body if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1]
    if not lines or len(lines) != len(node.body.body):
        return False
    smalls = [line.body[0] for line in lines]
    if all(type(s) is cst.Assign for s in smalls):
        return node.orelse is None and all(isinstance(s, cst.Assign) and _moves_in_place(s) for s in smalls)
    if len(smalls) != 1 or type(returned := smalls[0]) is not cst.Return or returned.value is None:
        return False
    moved = _unmoved(returned.value)
    if moved is None:
        return False
    other: Sequence[cst.BaseStatement | cst.BaseSmallStatement]
    if type(node.orelse) is cst.Else:
        other = node.orelse.body.body
    elif node.orelse is None and function is not None and type(function.body) is cst.IndentedBlock:
        body = list(function.body.body)
        other = body[body.index(node) + 1 : body.index(node) + 2] if node in body else []
    else:
        return False
    return _returns(other, moved)


def _moves_in_place(assign: cst.Assign) -> bool:
    """``x = x.cpu()``: the name it binds, moved to the host."""
    moved = _unmoved(assign.value)
    return len(assign.targets) == 1 and moved is not None and moved.deep_equals(assign.targets[0].target)


def _returns(statements: Sequence[cst.BaseStatement | cst.BaseSmallStatement], value: cst.BaseExpression) -> bool:
    """The statements are ``return <value>``."""
    if len(statements) != 1 or type(line := statements[0]) is not cst.SimpleStatementLine or len(line.body) != 1:
        return False
    small = line.body[0]
    return type(small) is cst.Return and small.value is not None and small.value.deep_equals(value)
