"""Names a function binds only under a rank check (``if rank == 0: start = time.time()``).

``xm.master_print(...)`` evaluates its arguments in every process and only then checks the
ordinal, so ``if rank == 0: print(time.time() - start)`` cannot lose its guard when ``start``
is bound in the master process alone: every other process would raise UnboundLocalError
(XLA610 keeps such a print as it is).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from codemods.engine.nodes import dotted, walk


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The expressions a statement or expression binds (none for others)."""
    if type(node) is cst.Assign:
        return [target.target for target in node.targets]
    if type(node) in (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor):
        return [node.target]  # type: ignore[attr-defined]  # every one of these types has ``target``
    if type(node) is cst.WithItem and node.asname is not None:
        return [node.asname.name]
    return []


def _names(target: cst.BaseExpression) -> list[str]:
    """``a``, ``self.a``, each element of ``a, (b, *c)``."""
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _names(element.value)]  # type: ignore[attr-defined]  # Tuple and List have elements
    if type(target) is cst.StarredElement:
        return _names(target.value)
    name = dotted(target)
    return [name] if name is not None else []


def rank_bound_read(guard: cst.If, scope: cst.FunctionDef, tests_rank: Callable[[cst.If], bool]) -> str | None:
    """A name the body of ``guard`` reads that ``scope`` binds only inside rank checks
    (``tests_rank``), never outside them; None if there is none.  Nested defs, classes and
    lambdas bind in scopes of their own and are left out."""
    reads = {name for sub in walk(guard.body) if (name := dotted(sub)) is not None}
    if not reads:
        return None
    guarded: set[str] = set()
    plain: set[str] = set()
    # (an explicit stack, not a recursive closure: a closure naming itself is a reference
    # cycle that only the garbage collector frees, with the tree it holds)
    stack: list[tuple[cst.CSTNode, bool]] = [(scope.body, False)]
    while stack:
        node, under = stack.pop()
        if node is guard or (node is not scope and type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if type(node) is cst.If:
            inside = under or tests_rank(node)
            stack.append((node.test, under))
            stack.append((node.body, inside))
            if node.orelse is not None:
                stack.append((node.orelse, inside))  # the other branch of a rank check is rank-bound too
            continue
        for target in _targets(node):
            (guarded if under else plain).update(_names(target))
        stack.extend((child, under) for child in node.children)
    for name in sorted(reads):
        if name in guarded and name not in plain:
            return name
    return None
