"""The methods of a class that only the processes it spawns itself run, or its own run that spawns
none (ProDiff's ``Trainer``: ``fit`` calls ``mp.spawn(self.ddp_run, ...)`` when there are several
devices and ``self.run_single_process(task)`` otherwise; ``ddp_run`` starts the process group and calls
``run_single_process`` too, which calls ``restore_opt_state`` and ``configure_ddp``).  A rank read there
runs in a worker, or in a process that never launches any: the XLA runtime may be read there (it
must not be in the launching process before the launch: torch_xla.launch then finds it initialized),
so the read is ported as a worker's is, not reported as the launching process's (XLA609).

A method is such when the module names it only as ``self.<name>`` inside its class (not a dunder,
nor named elsewhere in the module: a caller outside may run it in the launching process), at least
once, and every such place is the spawn's own ``fn`` argument, a statement of the other arm of the
``if`` whose arm holds the spawn (that run never spawns), or inside another such method."""

from __future__ import annotations

from collections.abc import Collection

import libcst as cst

from codemods.engine.nodes import walk


def worker_only_nodes(module: cst.Module, spawns: Collection[cst.Call], functions: Collection[cst.CSTNode]) -> set[int]:
    """The ids of the nodes inside the methods that only spawned workers, or a run that spawns none,
    run (``spawns``: the spawn calls whose ``fn`` is the first argument or ``fn=``; ``functions``: each
    spawn's ``fn`` value)."""
    found: set[int] = set()
    fns = {id(fn) for fn in functions}
    for statement in module.body:
        if type(statement) is not cst.ClassDef or type(statement.body) is not cst.IndentedBlock:
            continue
        inside = walk(statement)
        ids = {id(node) for node in inside}
        owned = [call for call in spawns if id(call) in ids]
        if not owned:
            continue
        for method in _worker_methods(module, statement, owned, fns):
            found.update(id(node) for node in walk(method))
    return found


def _worker_methods(
    module: cst.Module, cls: cst.ClassDef, spawns: list[cst.Call], fns: set[int]
) -> list[cst.FunctionDef]:
    body = cls.body.body if type(cls.body) is cst.IndentedBlock else ()
    methods = {item.name.value: item for item in body if type(item) is cst.FunctionDef}
    # Where each method is named as ``self.<name>``: (the method holding the place, the attribute).
    places: dict[str, list[tuple[str, cst.Attribute]]] = {}
    for name, method in methods.items():
        for node in walk(method):
            if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
                places.setdefault(node.attr.value, []).append((name, node))
    in_class = {id(node) for node in walk(cls)}
    elsewhere = {
        node.attr.value for node in walk(module) if type(node) is cst.Attribute and id(node) not in in_class
    } | {
        value
        for node in walk(module)
        if type(node) is cst.SimpleString and id(node) not in in_class
        for value in (node.raw_value,)
    }
    single_run = _other_arms(methods.values(), spawns)
    safe: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, where in places.items():
            if name in safe or name not in methods or name.startswith("__") or name in elsewhere:
                continue
            if all(id(attr) in fns or id(attr) in single_run or holder in safe for holder, attr in where):
                safe.add(name)
                grew = True
    return [methods[name] for name in safe]


def _other_arms(methods: Collection[cst.FunctionDef], spawns: list[cst.Call]) -> set[int]:
    """The ids of the nodes in the other arm of each ``if`` one of whose arms holds a spawn (as a
    statement of that arm's block, not deeper): the run that takes it spawns nothing there."""
    spawned = {id(call) for call in spawns}
    found: set[int] = set()
    for method in methods:
        for node in walk(method):
            if type(node) is not cst.If or type(node.orelse) is not cst.Else:
                continue
            arms = (node.body, node.orelse.body)
            for at, arm in enumerate(arms):
                if any(_spawns_alone(statement, spawned) for statement in _statements(arm)):
                    found.update(id(sub) for sub in walk(arms[1 - at]))
    return found


def _statements(block: cst.BaseSuite) -> tuple[cst.CSTNode, ...]:
    if isinstance(block, cst.IndentedBlock):
        return tuple(block.body)
    if isinstance(block, cst.SimpleStatementSuite):
        return tuple(block.body)
    return ()


def _spawns_alone(statement: cst.CSTNode, spawned: set[int]) -> bool:
    """A statement that is a spawn call (``mp.spawn(...)``, its result bound or not)."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(_spawns_alone(small, spawned) for small in statement.body)
    if isinstance(statement, (cst.Expr, cst.Assign)):
        return id(statement.value) in spawned
    return False
