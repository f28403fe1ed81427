"""The shared walk: one read-only traversal of the parsed script that keeps track of
where it is (function, loop, condition, class, try) and hands every node to each
concern's analysis, the way ``rewrite.base.Rewriter`` hands nodes to the rewrites."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

if TYPE_CHECKING:
    from codemods.analysis import Facts

AnalysisT = TypeVar("AnalysisT", bound="Analysis")

# Import statements are read whole by the imports analysis: their names are not uses.
_OPAQUE = (cst.Import, cst.ImportFrom)


class Analysis:
    """One concern's analysis.  Methods named ``visit_<Node>(node)`` run when the walk
    enters such a node, ``leave_<Node>(node)`` when it leaves it; ``finish()`` runs
    after the walk, in the order the analyses were given, and ``settle()`` after every
    analysis has finished (for conclusions that need the others' results)."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.facts = walk.facts

    def finish(self) -> None:
        """Turn what the walk collected into facts."""

    def settle(self) -> None:
        """Conclusions that need every analysis finished."""


class Walk(cst.CSTVisitor):
    """Where the walk is, for every analysis: the enclosing functions, loops and
    conditions.  ``loops`` holds None at a function boundary, so ``loop`` is the
    innermost loop of the current function only."""

    def __init__(self, facts: Facts, kinds: list[type[Analysis]]) -> None:
        super().__init__()
        self.facts = facts
        self.functions: list[cst.FunctionDef | None] = []  # None: a lambda
        self.loops: list[cst.CSTNode | None] = []
        self.conds: list[cst.CSTNode] = []  # enclosing If and IfExp nodes
        self.scopes: list[str] = []  # names of the enclosing classes and functions
        self._ifs_in_loop: list[int] = []  # per entry of ``loops``: Ifs entered inside it
        self.class_depth = 0
        self.guard_depth = 0  # enclosing try and if statements
        self.analyses: list[Analysis] = []
        for kind in kinds:  # one by one: an analysis may look up the ones before it
            self.analyses.append(kind(self))
        self.visitors: dict[str, list[Callable[[cst.CSTNode], object]]] = defaultdict(list)
        self.leavers: dict[str, list[Callable[[cst.CSTNode], object]]] = defaultdict(list)
        for analysis in self.analyses:
            for attr in dir(type(analysis)):
                if attr.startswith("visit_"):
                    self.visitors[attr.removeprefix("visit_")].append(getattr(analysis, attr))
                elif attr.startswith("leave_"):
                    self.leavers[attr.removeprefix("leave_")].append(getattr(analysis, attr))

    def analysis(self, kind: type[AnalysisT]) -> AnalysisT:
        return next(a for a in self.analyses if isinstance(a, kind))

    def resolve(self, node: cst.CSTNode | None) -> str | None:
        return self.facts.imports.table.resolve(node)

    # -- where the walk is ------------------------------------------------------------

    @property
    def loop(self) -> cst.CSTNode | None:
        """The innermost loop of the current function (None outside any)."""
        return self.loops[-1] if self.loops else None

    @property
    def function(self) -> cst.FunctionDef | None:
        """The innermost function; None at module level and directly inside a lambda."""
        return self.functions[-1] if self.functions else None

    @property
    def enclosing_function(self) -> cst.FunctionDef | None:
        """The innermost ``def`` (lambdas are looked through); None at module level."""
        return next((f for f in reversed(self.functions) if f is not None), None)

    @property
    def qualname(self) -> str:
        """``Trainer.train`` inside that method, "" at module level (lambdas are looked through)."""
        return ".".join(self.scopes)

    @property
    def module_level(self) -> bool:
        return not self.functions and not self.class_depth

    @property
    def conditional_in_loop(self) -> bool:
        """Inside an ``if`` within the innermost loop (code that may not run every iteration)."""
        return bool(self._ifs_in_loop and self._ifs_in_loop[-1])

    # -- traversal ----------------------------------------------------------------------

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.Lambda:
            self.functions.append(node if kind is cst.FunctionDef else None)  # type: ignore[arg-type]
            self._enter_loop(None)
            if kind is cst.FunctionDef:
                self.scopes.append(node.name.value)  # type: ignore[attr-defined]
        elif kind is cst.For or kind is cst.While:
            self._enter_loop(node)
        elif kind is cst.If:
            self.guard_depth += 1
            self.conds.append(node)
            if self._ifs_in_loop:
                self._ifs_in_loop[-1] += 1
        elif kind is cst.IfExp:
            self.conds.append(node)
        elif kind is cst.Try:
            self.guard_depth += 1
        elif kind is cst.ClassDef:
            self.class_depth += 1
            self.scopes.append(node.name.value)  # type: ignore[attr-defined]
        for visit in self.visitors.get(kind.__name__, ()):
            visit(node)
        return kind not in _OPAQUE

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node)
        for leave in self.leavers.get(kind.__name__, ()):
            leave(original_node)
        if kind is cst.FunctionDef or kind is cst.Lambda:
            self.functions.pop()
            self._leave_loop()
            if kind is cst.FunctionDef:
                self.scopes.pop()
        elif kind is cst.For or kind is cst.While:
            self._leave_loop()
        elif kind is cst.If:
            self.guard_depth -= 1
            self.conds.pop()
            if self._ifs_in_loop:
                self._ifs_in_loop[-1] -= 1
        elif kind is cst.IfExp:
            self.conds.pop()
        elif kind is cst.Try:
            self.guard_depth -= 1
        elif kind is cst.ClassDef:
            self.class_depth -= 1
            self.scopes.pop()

    def _enter_loop(self, node: cst.CSTNode | None) -> None:
        self.loops.append(node)
        self._ifs_in_loop.append(0)

    def _leave_loop(self) -> None:
        self.loops.pop()
        self._ifs_in_loop.pop()

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def finish(self) -> None:
        for analysis in self.analyses:
            analysis.finish()
        for analysis in self.analyses:
            analysis.settle()
