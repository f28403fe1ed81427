"""The one switch over the speed machinery: the rewrite's pruned traversal (it enters
only the nodes the fact sheet names, references through the imports and their
ancestors: ``Facts.nodes_to_visit``), the fact-sheet scan that finds those nodes (it reads
only the fields whose annotations may hold nodes), the node caches
(``engine.nodemap.node_cache``), the walk's keyed hooks (``@calls_of`` and
``@attributes_named``: the walk hands a call or an attribute to the hooks of its callee or
name alone), the resolved paths the run keeps (``project.roots.resolved``) and the answers a project keeps
(``project.resolver``: each file's import context, its lookups, which paths it contains).

They are on.  ``full_traversal()`` turns them off for a block, so that tests can check
that the shortcuts change nothing (tests/engine/test_speed_guards.py): the rewrite then runs as
LibCST's own traversal over every node, every field of the fact sheet is searched,
caches compute each time, keyed hooks see every call or attribute and look at the key
themselves, paths are resolved each time and a project's answers found each time.  The setting is read when a walk, a rewriter or a cache is made,
never per node."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_shortcuts = True


def shortcuts() -> bool:
    """Whether the pruned traversal and the node caches are in use."""
    return _shortcuts


@contextlib.contextmanager
def full_traversal() -> Iterator[None]:
    """No shortcuts inside the block: every node visited, nothing cached."""
    global _shortcuts
    outer = _shortcuts
    _shortcuts = False
    try:
        yield
    finally:
        _shortcuts = outer
