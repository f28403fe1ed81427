"""Steps serialised by a thread lock: ``with lock: ... optimizer.step()`` (or between ``lock.acquire()``
and ``lock.release()``) where ``lock`` was built by ``threading.Lock()`` or ``threading.RLock()`` (a
parameter's default, ``lock = ...``, ``self._lock = ...``, however named), in a function a training
loop calls (or in that loop's body).
Such a loop runs in several threads (torchbeast's ``batch_and_learn`` threads, whose ``learn``
takes the step under the lock).  On torch_xla 2.9 a barrier is no thread-safe point: a
``torch_xla.sync()`` at the end of the loop's iteration, outside the lock, runs while another
thread is inside its step and that thread's backward pass fails (``RuntimeError: Check failed:
data()->tensor_data``).  The barrier goes inside the lock, right after the statement of the block
that takes the step (or makes the call that reaches it), where no other thread is in its step."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import dotted, walk
from codemods.training.facts import LockedStep

LOCK_CLASSES = frozenset({"threading.Lock", "threading.RLock"})

Resolve = Callable[[cst.BaseExpression], "str | None"]


# A region of statements a thread lock holds: the body of ``with lock:``, or the statements of a
# block from ``lock.acquire()`` to ``lock.release()``; the node that marks it (the ``with``, the
# acquiring statement), and the lock as written.
Region = tuple[cst.CSTNode, "list[cst.BaseStatement] | None", str]


def lock_regions(module: cst.Module, resolve: Resolve) -> list[Region]:
    """The regions of the module that a thread lock holds (the statements None: a ``with`` whose
    block is on its line)."""
    names: set[str] = set()
    withs: list[cst.With] = []
    blocks: list[cst.IndentedBlock] = []
    for node in walk(module):
        if type(node) is cst.With:
            withs.append(node)
        elif type(node) is cst.IndentedBlock:
            blocks.append(node)
        elif type(node) is cst.Param and node.default is not None and _builds_lock(node.default, resolve):
            names.add(node.name.value)
        elif type(node) is cst.Assign and _builds_lock(node.value, resolve):
            names.update(name for target in node.targets if (name := dotted(target.target)) is not None)
        elif type(node) is cst.AnnAssign and node.value is not None and _builds_lock(node.value, resolve):
            if (name := dotted(node.target)) is not None:
                names.add(name)
    found: list[Region] = []
    for node in withs:
        for item in node.items:
            written = dotted(item.item)
            if (written is not None and written in names) or _builds_lock(item.item, resolve):
                body = node.body
                found.append((node, list(body.body) if type(body) is cst.IndentedBlock else None, written or "lock"))
                break
    for block in blocks:
        statements = list(block.body)
        for at, statement in enumerate(statements):
            lock = _lock_call(statement, "acquire", names)
            if lock is None:
                continue
            end = next(
                (i for i in range(at + 1, len(statements)) if _lock_call(statements[i], "release", names) == lock),
                len(statements),
            )
            found.append((statement, statements[at + 1 : end], lock))
    return found


def locked_step(region: Region, is_step: Callable[[cst.Call], bool]) -> LockedStep | None:
    """Where the barrier goes in ``region``: after the last of its statements that takes a step
    or calls what does; None when none does."""
    node, statements, lock = region
    if statements is None:
        if any(type(sub) is cst.Call and is_step(sub) for sub in _own(node)):
            return LockedStep(None, lock, "its block is on the `with` line")
        return None
    taking = [s for s in statements if any(type(sub) is cst.Call and is_step(sub) for sub in _own(s))]
    if not taking:
        return None
    last = taking[-1]
    if type(last) is cst.SimpleStatementLine and any(type(small) in (cst.Return, cst.Raise) for small in last.body):
        return LockedStep(None, lock, "the statement that takes it returns from the function inside the lock")
    return LockedStep(last, lock)


def _lock_call(statement: cst.BaseStatement, method: str, names: set[str]) -> str | None:
    """``lock.acquire()`` (``lock.release()``) as a statement of its own, on a lock of ``names``: the lock."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if type(small) is not cst.Expr or type(small.value) is not cst.Call:
        return None
    func = small.value.func
    if type(func) is not cst.Attribute or func.attr.value != method:
        return None
    lock = dotted(func.value)
    return lock if lock in names else None


def _builds_lock(value: cst.BaseExpression, resolve: Resolve) -> bool:
    return type(value) is cst.Call and resolve(value.func) in LOCK_CLASSES


def _own(statement: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``statement`` outside the functions and classes it defines."""
    inner = {
        id(sub)
        for node in walk(statement)
        if node is not statement and type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        for sub in walk(node)
    }
    return [node for node in walk(statement) if id(node) not in inner]
