"""Checks of the same device that work as a pair: ``if device.type == "cuda": start =
torch.cuda.Event(...)`` before a step and ``if device.type == "cuda": end.record(); ... start.elapsed_time(end)``
after it, each with an ``else`` that times with ``time.time()``. On XLA both checks are False and
both ``else`` branches run. Porting one check to ``== "xla"`` while the other stays makes the ported
branch run on XLA and read names that only the branch left untaken binds (an UnboundLocalError):
a check whose branch newly taken on XLA reads such a name stays as its partner does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from codemods.device.facts import negated_check
from codemods.engine.nodes import walk


@dataclass(frozen=True)
class GuardCandidate:
    """A check for CUDA (``device.type == "cuda"``, ``torch.cuda.is_available()``) in the test of
    an ``if``, in its scope."""

    comparison: cst.BaseExpression
    statement: cst.If
    scope: cst.CSTNode  # the enclosing function, or the module


def taken_on_cuda(statement: cst.If, check: cst.BaseExpression) -> cst.BaseSuite | None:
    """The branch that runs where the check says CUDA (the body of ``== "cuda"``, the ``else``
    of ``!= "cuda"`` or of ``not torch.cuda.is_available()``); None where the check is only part
    of the test."""
    test = statement.test
    negated = negated_check(check)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if test is not check:
        return None
    if negated:
        return statement.orelse.body if isinstance(statement.orelse, cst.Else) else None
    return statement.body


class _Names(cst.CSTVisitor):
    """The names a piece of code reads before binding them, and the names it binds, in one
    scope (nested functions, classes and lambdas are other scopes; their names are bound)."""

    def __init__(self) -> None:
        self.bound: dict[str, list[cst.CSTNode]] = {}
        self.unbound_reads: list[tuple[str, cst.Name]] = []
        self._local: list[set[str]] = []  # comprehension targets

    def _bind(self, target: cst.BaseExpression | cst.BaseAssignTargetExpression) -> None:
        if isinstance(target, cst.Name):
            self.bound.setdefault(target.value, []).append(target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        else:
            target.visit(self)  # `x.y = ...`, `x[i] = ...` read x

    def visit_Name(self, node: cst.Name) -> bool:
        name = node.value
        if name not in self.bound and not any(name in local for local in self._local):
            self.unbound_reads.append((name, node))
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for target in node.targets:
            self._bind(target.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
            self._bind(node.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.value.visit(self)
        node.target.visit(self)  # `x += 1` reads x first
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        self._bind(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._bind(node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_AsName(self, node: cst.AsName) -> bool:
        self._bind(node.name)  # with ... as x, except E as x, import a as x
        return False

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        if node.asname is None:
            head = node.name
            while isinstance(head, cst.Attribute):
                head = head.value  # type: ignore[assignment]  # `import a.b` binds a
            if isinstance(head, cst.Name):
                self._bind(head)
        else:
            node.asname.visit(self)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                alias.visit(self)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._bind(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        for item in node.names:
            self._bind(item.name)  # bound elsewhere: never unbound here
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        for item in node.names:
            self._bind(item.name)
        return False

    def _enter_comprehension(self, node: cst.BaseComp) -> None:
        targets: set[str] = set()
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            targets.update(n.value for n in _names_in_target(comp.target))
            comp = comp.inner_for_in
        self._local.append(targets)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_comprehension(node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._local.pop()

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_comprehension(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._local.pop()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._enter_comprehension(node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._local.pop()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._enter_comprehension(node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._local.pop()


def _names_in_target(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _names_in_target(element.value)]
    return []


def _scope_bindings(scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
    """Every binding of each name in ``scope`` (a function's parameters bind too)."""
    names = _Names()
    if isinstance(scope, cst.FunctionDef):
        for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            names._bind(param.name)
        for star in (scope.params.star_arg, scope.params.star_kwarg):
            if isinstance(star, cst.Param):
                names._bind(star.name)
        scope.body.visit(names)
    else:
        scope.visit(names)
    return names.bound


def _inside(node: cst.CSTNode, suite: cst.BaseSuite) -> bool:
    # (``node`` is a bound Name: ``walk``, which leaves out only whitespace and punctuation, holds it)
    return any(sub is node for sub in walk(suite))


def kept_with_partners(
    candidates: Sequence[GuardCandidate], kept: set[cst.BaseExpression]
) -> dict[cst.BaseExpression, tuple[str, cst.BaseExpression]]:
    """The candidates not in ``kept`` (about to be ported) whose branch newly taken on XLA reads
    a name that only the untaken branches of kept checks bind: each with that name and the kept
    check that binds it. Keeping one may strand another, so this runs until nothing changes."""
    stays = set(kept)
    paired: dict[cst.BaseExpression, tuple[str, cst.BaseExpression]] = {}
    bindings: dict[int, dict[str, list[cst.CSTNode]]] = {}
    changed = True
    while changed:
        changed = False
        untaken = [
            (c.comparison, branch)
            for c in candidates
            if c.comparison in stays and (branch := taken_on_cuda(c.statement, c.comparison)) is not None
        ]
        for candidate in candidates:
            if candidate.comparison in stays:
                continue
            branch = taken_on_cuda(candidate.statement, candidate.comparison)
            if branch is None:
                continue
            scope_bindings = bindings.get(id(candidate.scope))
            if scope_bindings is None:  # (once per scope: a LibCST visitor over it)
                scope_bindings = bindings[id(candidate.scope)] = _scope_bindings(candidate.scope)
            partner = _stranded_read(branch, scope_bindings, untaken, candidate.scope)
            if partner is not None:
                paired[candidate.comparison] = partner
                stays.add(candidate.comparison)
                changed = True
    return paired


def _stranded_read(
    branch: cst.BaseSuite,
    scope_bindings: dict[str, list[cst.CSTNode]],
    untaken: list[tuple[cst.BaseExpression, cst.BaseSuite]],
    scope: cst.CSTNode,
) -> tuple[str, cst.BaseExpression] | None:
    reads = _Names()
    branch.visit(reads)
    for name, _ in reads.unbound_reads:
        sites = scope_bindings.get(name, [])
        if not sites:
            continue  # a global, a builtin, or a name of another scope
        holders = [next((c for c, suite in untaken if _inside(site, suite)), None) for site in sites]
        if all(holder is not None for holder in holders):
            return name, holders[0]  # type: ignore[return-value]  # all are set
    return None
