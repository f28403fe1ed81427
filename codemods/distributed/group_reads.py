"""Reads of the process group's rank and size (``dist.get_rank()``, ``dist.get_world_size()``)
that only run once the group is up: under ``if dist.is_initialized():`` (also a conjunct of an
``and``, ``dist.is_available() and dist.is_initialized()``, or an ``if ... else`` expression), after
an ``if not dist.is_initialized(): return`` of their function, or after their function's own
``dist.init_process_group(...)``.  The port starts that group on the "xla" backend, whose rank and
size are the XLA runtime's (on torch_xla 2.9 ``dist.get_rank()`` and ``dist.get_world_size()`` after
``init_process_group("xla", init_method="xla://")`` equal ``xr.global_ordinal()`` and
``xr.world_size()`` in every process), so such a read is right as written: XLA602 leaves it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import walk

if TYPE_CHECKING:
    from codemods.engine.walk import Walk

IS_INITIALIZED = "torch.distributed.is_initialized"
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


def group_is_up(w: Walk, node: cst.CSTNode) -> bool:
    """``node`` (a rank or size read) runs only where the process group is started."""
    for cond in w.conds:
        if any(sub is node for sub in walk(cond.body)) and _conjuncts_check(w, cond.test, negated=False):
            return True
    function = w.enclosing_function
    if function is None or type(function.body) is not cst.IndentedBlock:
        return False
    for statement in function.body.body:
        if any(sub is node for sub in walk(statement)):
            return False
        if _starts_group(w, statement) or _returns_without_group(w, statement):
            return True
    return False


def _conjuncts_check(w: Walk, test: cst.BaseExpression, *, negated: bool) -> bool:
    """``test`` holds only where the group is up (``negated``: only where it is not)."""
    if type(test) is cst.BooleanOperation:
        if type(test.operator) is (cst.Or if negated else cst.And):
            return _conjuncts_check(w, test.left, negated=negated) or _conjuncts_check(w, test.right, negated=negated)
        return False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _conjuncts_check(w, test.expression, negated=not negated)
    return not negated and type(test) is cst.Call and not test.args and w.resolve(test.func) == IS_INITIALIZED


def _starts_group(w: Walk, statement: cst.CSTNode) -> bool:
    return any(type(sub) is cst.Call and w.resolve(sub.func) == INIT_PROCESS_GROUP for sub in walk(statement))


def _returns_without_group(w: Walk, statement: cst.CSTNode) -> bool:
    """``if not dist.is_initialized(): return ...`` (or raise), no ``else``."""
    if type(statement) is not cst.If or statement.orelse is not None:
        return False
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else (statement.body,)
    last = body[-1] if body else None
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(type(s) in (cst.Return, cst.Raise) for s in smalls) and _conjuncts_check(
        w, statement.test, negated=True
    )
