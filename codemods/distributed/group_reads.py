"""Reads of the process group's rank and size (``dist.get_rank()``, ``dist.get_world_size()``)
that only run once the group is up: under ``if dist.is_initialized():`` (also a conjunct of an
``and``, ``dist.is_available() and dist.is_initialized()``, or an ``if ... else`` expression), after
an ``if not dist.is_initialized(): return`` of their function, or after their function's own
``dist.init_process_group(...)`` where it always runs (a statement of the function's body, or an
``if``/``else`` starting the group on every branch; after one under a condition alone the read keeps
its port).  The port starts that group on the "xla" backend, whose rank and
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
    """``statement`` (of a function body) always starts the group: ``dist.init_process_group(...)``
    as a statement of its own, or an ``if``/``else`` that starts it on every branch.  One under a
    condition alone (``if args.distributed: dist.init_process_group(...)``) does not: a read after
    it may run without a group."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(
            type(small) is cst.Expr
            and type(small.value) is cst.Call
            and w.resolve(small.value.func) == INIT_PROCESS_GROUP
            for small in statement.body
        )
    if type(statement) is cst.If:
        orelse = statement.orelse
        if orelse is None or not _block_starts(w, statement.body):
            return False
        return _starts_group(w, orelse) if type(orelse) is cst.If else _block_starts(w, orelse.body)
    return False


def _block_starts(w: Walk, block: cst.BaseSuite) -> bool:
    if isinstance(block, cst.SimpleStatementSuite):
        return _starts_group(w, block)
    return any(_starts_group(w, statement) for statement in block.body)


def _returns_without_group(w: Walk, statement: cst.CSTNode) -> bool:
    """``if not dist.is_initialized(): return ...`` (or raise), no ``else``."""
    if type(statement) is not cst.If or statement.orelse is not None:
        return False
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else (statement.body,)
    last = body[-1] if body else None
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(type(s) in (cst.Return, cst.Raise) for s in smalls) and _conjuncts_check(w, statement.test, negated=True)
