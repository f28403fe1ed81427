"""Functions and methods of a module that no code of the project calls (a validator whose only
call is commented out: ``# self._validate_runner_config(cfg)``), and the device code inside
them, which XLA120 reports as info in place of XLA101's error: it never runs.

A function is uncalled when its name is mentioned nowhere else in the module but inside
functions that are uncalled themselves (a public one that nothing names at all may be the
project's API: it must be private, or named by such functions), and in no other file of the project (a quick textual
scan of its Python, notebook, config and shell files: a call, an import, a registry's string,
a YAML ``_target_``, an entry point all mention it). Decorated functions (a registry's
``@register``), dunder methods, and the methods of a class with bases (a framework may call
an override: ``forward``, ``training_step``) are never taken for uncalled, nor is anything
when the project's files are not known."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine import speed
from codemods.engine.nodes import children_reader

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

# Decorators that leave a function called only where it is named.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


def uncalled_nodes(
    module: cst.Module,
    nodes: Collection[cst.CSTNode],
    mentioned_elsewhere: Callable[[str], bool | None],
    in_a_function: Callable[[cst.CSTNode], bool | None] | None = None,
) -> dict[cst.CSTNode, str]:
    """Those of ``nodes`` inside a function or method that no code of the project calls: the
    function's qualified name (``Config._validate``) by node.  ``in_a_function``: whether the
    shared walk met a node inside a ``def`` (None: it did not meet it), to skip the module's
    traversal when none of ``nodes`` is."""
    candidates = _candidates(module)
    if not candidates:
        return {}
    if in_a_function is not None and speed.shortcuts() and not any(in_a_function(n) is not False for n in nodes):
        return {}  # all at module or class level: in no function at all
    collector = _References({name.rpartition(".")[2] for name in candidates}, {id(n) for n in nodes})
    collector.visit(module)
    # The functions that hold such a node, and those that name them, up the chain: the only
    # ones whose calls matter (each asked of the project's other files once).
    relevant = {where for where in collector.inside.values() if where in candidates}
    pending = list(relevant)
    while pending:
        for where in collector.references.get(pending.pop().rpartition(".")[2], ()):
            if where == "" or where not in candidates:
                continue  # named at module level or by another function: that one decides
            if where not in relevant:
                relevant.add(where)
                pending.append(where)
    # The largest set of them that nothing outside the set names.
    # (a public function that nothing names at all may be the project's API, a library's
    # ``local_device()`` its users call: only a private one, or one that its module names, counts)
    uncalled = {
        q
        for q in relevant
        if (_private(q) or collector.references.get(q.rpartition(".")[2]))
        and mentioned_elsewhere(q.rpartition(".")[2]) is False
    }
    changed = True
    while changed:
        changed = False
        for qualname in sorted(uncalled):
            if any(where not in uncalled for where in collector.references.get(qualname.rpartition(".")[2], ())):
                uncalled.discard(qualname)
                changed = True
    by_id = {id(n): n for n in nodes}
    return {by_id[i]: where for i, where in collector.inside.items() if where in uncalled}


def _private(qualname: str) -> bool:
    return qualname.rpartition(".")[2].startswith("_")


def _candidates(module: cst.Module) -> set[str]:
    """Top-level functions and the methods of top-level classes without bases, undecorated
    (but for staticmethod and classmethod), dunders left out: qualified names."""
    found: set[str] = set()
    for statement in module.body:
        if type(statement) is cst.FunctionDef and _plain(statement):
            found.add(statement.name.value)
        elif type(statement) is cst.ClassDef and not statement.bases and not statement.keywords:
            found.update(
                f"{statement.name.value}.{d.name.value}"
                for d in statement.body.body
                if type(d) is cst.FunctionDef and _plain(d)
            )
    return found


def _plain(definition: cst.FunctionDef) -> bool:
    name = definition.name.value
    if name.startswith("__") and name.endswith("__"):
        return False
    return all(type(d.decorator) is cst.Name and d.decorator.value in _PLAIN_DECORATORS for d in definition.decorators)


class _References:
    """Where the module names each of ``names`` (a name, an attribute, a string that is the name),
    by the qualified name of the function or method it is in ("" elsewhere: module or class level,
    a nested class), and the function each of the ``wanted`` nodes is in.  Its own traversal
    reads each node's children directly (``engine.nodes.children_reader``): a LibCST visitor's
    dispatch over every node of the module cost as much as the shared walk."""

    def __init__(self, names: set[str], wanted: set[int]) -> None:
        self.names = names
        self.wanted = wanted
        self.references: dict[str, set[str]] = defaultdict(set)
        self.inside: dict[int, str] = {}
        self._scopes: list[str] = []

    def _where(self) -> str:
        """The top-level function or method of a top-level class the walk is in ("": none)."""
        scopes = self._scopes
        if not scopes:
            return ""
        if not scopes[0].startswith("class "):
            return scopes[0]
        if len(scopes) > 1 and not scopes[1].startswith("class "):
            return f"{scopes[0].removeprefix('class ')}.{scopes[1]}"
        return ""

    def visit(self, module: cst.Module) -> None:
        # (node, False) enters a node; (None, True) leaves a function's or class's scope.
        pending: list[tuple[cst.CSTNode | None, bool]] = [(module, False)]
        names, wanted, references, inside, scopes = self.names, self.wanted, self.references, self.inside, self._scopes
        own_name: cst.CSTNode | None = None
        while pending:
            node, leaving = pending.pop()
            if leaving:
                scopes.pop()
                continue
            assert node is not None
            kind = type(node)
            if id(node) in wanted:
                inside[id(node)] = self._where()
            if kind is cst.FunctionDef:
                own_name = node.name  # type: ignore[attr-defined]  # narrowed by kind
                scopes.append(node.name.value)  # type: ignore[attr-defined]  # narrowed by kind
                pending.append((None, True))
            elif kind is cst.ClassDef:
                scopes.append("class " + node.name.value)  # type: ignore[attr-defined]  # narrowed by kind
                pending.append((None, True))
            elif kind is cst.Name:
                if node.value in names and node is not own_name:  # type: ignore[attr-defined]  # narrowed by kind
                    references[node.value].add(self._where())  # type: ignore[attr-defined]  # narrowed by kind
                continue
            elif kind is cst.SimpleString:
                text = node.value.strip("\"'rRbBuU")  # type: ignore[attr-defined]  # narrowed by kind
                if text in names:
                    references[text].add(self._where())
                continue
            pending.extend((child, False) for child in reversed(children_reader(kind)(node)))
