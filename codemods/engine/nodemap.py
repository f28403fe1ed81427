"""Maps and caches keyed by node identity.

LibCST nodes are compared and hashed by identity, but ``CSTNode.__hash__`` is Python
code, and the walk and the rewriter look nodes up for most nodes of a file: these key by
``id(node)``.  An id is only unique while its object lives, so every entry holds its node:
no id is reused while the map lives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

import libcst as cst

from codemods.engine import speed

V = TypeVar("V")
D = TypeVar("D")


class NodeMap(Generic[V]):
    """A dict from nodes (by identity) to values."""

    __slots__ = ("_entries", "ids")

    def __init__(self) -> None:
        self._entries: dict[int, tuple[cst.CSTNode, V]] = {}
        # The ids of the nodes held, a live view: ``id(node) in m.ids`` is a test without a
        # Python call, for paths that run for every node.
        self.ids = self._entries.keys()

    @overload
    def get(self, node: object) -> V | None: ...
    @overload
    def get(self, node: object, default: D) -> V | D: ...
    def get(self, node: object, default: object = None) -> object:
        entry = self._entries.get(id(node))
        return default if entry is None else entry[1]

    def __getitem__(self, node: object) -> V:
        return self._entries[id(node)][1]

    def __setitem__(self, node: cst.CSTNode, value: V) -> None:
        self._entries[id(node)] = (node, value)

    def __contains__(self, node: object) -> bool:
        return id(node) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (node for node, _ in self._entries.values())

    @overload
    def pop(self, node: object) -> V | None: ...
    @overload
    def pop(self, node: object, default: D) -> V | D: ...
    def pop(self, node: object, default: object = None) -> object:
        entry = self._entries.pop(id(node), None)
        return default if entry is None else entry[1]

    def setdefault(self, node: cst.CSTNode, default: V) -> V:
        entry = self._entries.get(id(node))
        if entry is None:
            entry = self._entries[id(node)] = (node, default)
        return entry[1]

    def items(self) -> Iterator[tuple[cst.CSTNode, V]]:
        return iter(self._entries.values())

    def values(self) -> Iterator[V]:
        return (value for _, value in self._entries.values())

    def clear(self) -> None:
        self._entries.clear()


class NodeCache(NodeMap[V]):
    """``compute(node)``, computed once per node while the cache lives (``clear()`` when
    what it depends on changes)."""

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[cst.CSTNode], V]) -> None:
        super().__init__()
        self._compute = compute

    def __call__(self, node: cst.CSTNode) -> V:
        entry = self._entries.get(id(node))
        if entry is None:
            entry = self._entries[id(node)] = (node, self._compute(node))
        return entry[1]


class _Uncached(NodeCache[V]):
    """What ``node_cache`` gives with the shortcuts off: computes every time."""

    __slots__ = ()

    def __call__(self, node: cst.CSTNode) -> V:
        return self._compute(node)


def node_cache(compute: Callable[[cst.CSTNode], V]) -> NodeCache[V]:
    """A cache of ``compute`` by node (one that computes every time inside
    ``speed.full_traversal()``, so that tests can check it changes nothing)."""
    return NodeCache(compute) if speed.shortcuts() else _Uncached(compute)
