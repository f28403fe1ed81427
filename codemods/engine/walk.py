"""The shared walk: one read-only traversal of the parsed script that keeps track of
where it is (function, loop, condition, class, try) and hands every node to each
concern's analysis, the way ``engine.rewriter.Rewriter`` hands nodes to the rewrites."""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import ClassVar, Protocol, TypeVar

import libcst as cst

from codemods import apis
from codemods.engine import speed
from codemods.engine.imports import ImportFacts
from codemods.engine.nodemap import NodeCache, node_cache
from codemods.engine.nodes import assigned_values, children_reader, dotted, is_node_class


class FactSheet(Protocol):
    """What the walk and the rewriter read of the fact sheet themselves.  The sheet is
    codemods/facts.py's ``Facts``: an analysis or a rewrite that reads it says so
    (``facts: Facts`` in its class), and the engine never imports it."""

    @property
    def imports(self) -> ImportFacts: ...


AnalysisT = TypeVar("AnalysisT", bound="Analysis")
HookT = TypeVar("HookT", bound=Callable[..., object])
# A hook takes the nodes of the type it is registered for (a table keyed by node type
# cannot say which type each entry's hooks take).
Hook = Callable[[typing.Any], object]
# An ``@assignments`` hook, bound to its analysis: (the name chain bound, the value bound to it).
AssignmentHook = Callable[[str, cst.BaseExpression], object]
AssignmentHookT = TypeVar("AssignmentHookT", bound=Callable[[typing.Any, str, cst.BaseExpression], object])

# Import statements are read whole by the imports analysis: their names are not uses.
_OPAQUE = frozenset({cst.Import, cst.ImportFrom})
# Per node type: the visit and leave hooks, whether it is a place, whether it is opaque, its children.
_Plan = tuple[
    tuple[Hook, ...],
    tuple[Hook, ...],
    bool,
    bool,
    Callable[[cst.CSTNode], Sequence[cst.CSTNode]],
]
# The nodes that change where the walk is (functions, loops, conditions, classes, try).
_PLACES = frozenset({cst.FunctionDef, cst.Lambda, cst.For, cst.While, cst.If, cst.IfExp, cst.Try, cst.ClassDef})
# Besides the fact sheet's nodes, the rewrites look at every reference through the
# imports and at these names and string keys themselves (pin_memory=... arguments).
_LOOKED_AT = frozenset({"pin_memory"})


def calls_of(*names: str | Iterable[str]) -> Callable[[HookT], HookT]:
    """Make an analysis method the hook for the calls whose callee the imports resolve to
    one of ``names`` (names, or sets of them): the walk looks each callee up once and hands
    the call to those hooks alone, where a ``visit_Call`` of every analysis would run for
    every call and ask the same question."""
    return _keyed(cst.Call, names)


def attributes_named(*names: str | Iterable[str]) -> Callable[[HookT], HookT]:
    """Make an analysis method the hook for the attributes ``x.<name>`` with one of
    ``names`` (the walk hands each attribute to the hooks of its name alone)."""
    return _keyed(cst.Attribute, names)


def assignments(*, unpack: bool = True) -> Callable[[AssignmentHookT], AssignmentHookT]:
    """Make an analysis method ``(self, name, value)`` the hook for every name chain an
    assignment binds with the value it is bound to: each target of ``x = y = value``
    (``self.model = ...``) and an annotated ``x: T = value`` (not a bare ``x: T``), the
    name chain as ``engine.nodes.dotted`` writes it.  With ``unpack`` (the default), a
    tuple unpacked from a tuple (``a, b = x, y``) gives each name its own element's value
    (``engine.nodes.assigned_values``); without it, a target that is not a name chain is
    passed by.  Augmented assignments and ``:=`` are not assignments here (their targets
    keep the value they had, combined)."""

    def mark(method: AssignmentHookT) -> AssignmentHookT:
        method.walk_assignments = unpack  # type: ignore[attr-defined]  # a function's attributes are untyped
        return method

    return mark


def _named_targets(node: cst.Assign | cst.AnnAssign) -> list[tuple[str, cst.BaseExpression]]:
    """(dotted target, value) of an assignment's targets that are name chains."""
    if type(node) is cst.AnnAssign:
        name = dotted(node.target)
        return [(name, node.value)] if node.value is not None and name is not None else []
    assign = typing.cast(cst.Assign, node)  # ``type() is`` narrows only where it holds
    return [(name, assign.value) for target in assign.targets if (name := dotted(target.target)) is not None]


class _PairsOfLast:
    """(name, value) pairs of an assignment, kept for the last one asked: the
    ``@assignments`` hooks of a walk ask them of the same assignment in turn."""

    def __init__(self, unpack: bool) -> None:
        self._pairs_of = assigned_values if unpack else _named_targets
        self._node: cst.CSTNode | None = None
        self._pairs: list[tuple[str, cst.BaseExpression]] = []

    def __call__(self, node: cst.Assign | cst.AnnAssign) -> list[tuple[str, cst.BaseExpression]]:
        if node is not self._node:
            self._node = node
            self._pairs = self._pairs_of(node)
        return self._pairs


def _assignment_visitor(hook: AssignmentHook, pairs_of: _PairsOfLast) -> Hook:
    """The ``visit_Assign`` and ``visit_AnnAssign`` of an ``@assignments`` hook."""

    def visit(node: cst.Assign | cst.AnnAssign) -> None:
        for name, value in pairs_of(node):
            hook(name, value)

    return visit


def _keyed(kind: type, names: tuple[str | Iterable[str], ...]) -> Callable[[HookT], HookT]:
    keys = frozenset(n for group in names for n in ((group,) if isinstance(group, str) else group))

    def mark(method: HookT) -> HookT:
        method.walk_keys = (kind, keys)  # type: ignore[attr-defined]  # a function's attributes are untyped
        return method

    return mark


class Analysis:
    """One concern's analysis.  Methods named ``visit_<Node>(node)`` run when the walk
    enters such a node, ``leave_<Node>(node)`` when it leaves it; methods marked
    ``@calls_of(names)`` or ``@attributes_named(names)`` run for the calls and attributes
    of those names only (visited after the hooks of the analyses before, as a ``visit_``
    of their own would be); a method marked ``@assignments()`` runs for each name an
    assignment binds, with its value (after the analysis' own ``visit_Assign``); ``finish()`` runs after the walk, and ``conclude()`` after
    every analysis has finished (for conclusions that need the others' results).

    Each analysis declares what it reads, by name (the fact-sheet part of an analysis,
    or an analysis asked with ``walk.analysis``), and the order is derived from that
    (``walk_order``, ``conclude_order``); tests/engine/test_analysis_reads.py checks, on every
    fixture and rule case, that an analysis reads nothing else."""

    # The fact-sheet part it fills (``facts.<name>``), or, for an analysis that keeps
    # its results to itself, the name the others read it by.
    name: ClassVar[str] = ""
    # The part it fills when that is not its own (the analyses of one concern may share
    # their concern's part: reading it then means after all of them).
    fills: ClassVar[str] = ""
    # What it reads while walking or finishing: those analyses walk and finish first
    # (the imports are read by the walk itself: ``Walk.resolve``).
    reads: ClassVar[tuple[str, ...]] = ()
    # What it reads only while concluding (every analysis has finished by then): those
    # with a ``conclude`` of their own conclude first.
    conclude_reads: ClassVar[tuple[str, ...]] = ()

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.facts = walk.facts

    def finish(self) -> None:
        """Turn what the walk collected into facts."""

    def conclude(self) -> None:
        """Conclusions that need every analysis finished."""


class Walk:
    """Where the walk is, for every analysis: the enclosing functions, loops and
    conditions.  ``loops`` holds None at a function boundary, so ``loop`` is the
    innermost loop of the current function only.

    It walks the tree itself, in the order of the code, over the nodes that carry
    meaning (not whitespace or punctuation): LibCST's visitors rebuild every node they
    pass, which costs more than the analyses."""

    def __init__(self, facts: FactSheet, kinds: list[type[Analysis]], inspected: Callable[[str], bool]) -> None:
        """``inspected``: whether a reference that resolves to a name is one the rewrites
        look at by themselves (the walk marks it for the rewrite traversal)."""
        self.facts = facts
        self._inspected = inspected
        self.functions: list[cst.FunctionDef | None] = []  # None: a lambda
        self._defs: list[cst.FunctionDef] = []  # the ``def``s of ``functions`` (lambdas left out)
        self._def_ids: set[int] = set()  # every ``def`` walked (by id)
        self.loops: list[cst.CSTNode | None] = []
        self.conds: list[cst.If | cst.IfExp] = []  # enclosing If and IfExp nodes
        self.scopes: list[str] = []  # names of the enclosing classes and functions
        self._qualname = ""  # ``scopes`` joined, as they change (the hooks ask it at most nodes)
        self._ifs_in_loop: list[int] = []  # per entry of ``loops``: Ifs entered inside it
        self.class_depth = 0
        self.guard_depth = 0  # enclosing try and if statements
        self.moves = 0  # how many times the place changed: what depends on it may be kept until then
        # The parent of each node walked (by id), and the nodes the rewrites must visit:
        # the fact sheet's nodes, references through the imports, and their ancestors.
        self.parents: dict[int, int | None] = {}
        self.to_visit: set[int] = set()
        self._plans: dict[type, _Plan] = {}
        self.analyses: list[Analysis] = []
        self._by_kind: dict[type[Analysis], Analysis] = {}
        for kind in kinds:  # one by one: an analysis may look up the ones before it
            self.analyses.append(kind(self))
            self._by_kind[kind] = self.analyses[-1]
        # Per node type, the visit hooks of every analysis with its place in the analyses'
        # order, and the leave hooks; per call (by callee) and attribute (by name), the
        # keyed hooks, placed likewise.
        self.visitors: dict[type, list[tuple[int, Hook]]] = defaultdict(list)
        self.leavers: dict[type, list[Hook]] = defaultdict(list)
        self._keyed: dict[type, dict[str, list[tuple[int, Hook]]]] = {
            cst.Call: defaultdict(list),
            cst.Attribute: defaultdict(list),
        }
        pairs_of = {unpack: _PairsOfLast(unpack) for unpack in (True, False)}
        for index, analysis in enumerate(self.analyses):
            hooks = _class_hooks(type(analysis))
            for node_type, attr in hooks.visits:
                self.visitors[node_type].append((index, getattr(analysis, attr)))
            for node_type, attr in hooks.leaves:
                self.leavers[node_type].append(getattr(analysis, attr))
            for attr, unpack in hooks.assignments:
                visit = _assignment_visitor(getattr(analysis, attr), pairs_of[unpack])
                self.visitors[cst.Assign].append((index, visit))
                self.visitors[cst.AnnAssign].append((index, visit))
            for attr, node_type, keys in hooks.keyed:
                hook = getattr(analysis, attr)
                if speed.shortcuts():
                    for key in keys:
                        self._keyed[node_type][key].append((index, hook))
                else:  # every hook sees every node of its type and looks at the key itself
                    self.visitors[node_type].append((index, self._filtered(node_type, keys, hook)))
        self._callees = self._keyed[cst.Call].keys()
        self._attribute_names = self._keyed[cst.Attribute].keys()
        self._keyed_plans: dict[tuple[type, str], tuple[Hook, ...]] = {}
        # In a ``visit_Call`` hook: what the imports resolve the call's callee to (the walk
        # asks it once for every call, for the keyed hooks; children are walked after the
        # hooks, so it is the call's own there, not in a ``leave_Call``).
        self.callee: str | None = None
        # Likewise in a ``visit_Attribute`` hook: what the attribute chain resolves to.
        self.qualified: str | None = None
        self._table = facts.imports.table
        self._bindings = self._table.bindings
        # ``resolve(node)``: what the import table makes of a name chain.  Kept by node, as
        # every analysis asks it of the calls it meets, and the walk of every attribute
        # (emptied at each import).
        self.resolve: NodeCache[str | None] = node_cache(self._table.resolve)
        # ``resolve_dotted("a.b.c")``: the same for a name chain written as text.
        self.resolve_dotted = self._table.resolve_dotted
        self._taken = facts.imports.taken_names

    def analysis(self, kind: type[AnalysisT]) -> AnalysisT:
        """The analysis of that kind (analyses ask for each other in their hooks)."""
        found = self._by_kind[kind]
        assert isinstance(found, kind)  # each kind maps to its own instance: a dict cannot say so
        return found

    def ends_the_process(self, small: cst.BaseSmallStatement) -> bool:
        """``raise``, ``sys.exit()``, ``os._exit()``, or the builtins ``exit()`` and ``quit()``."""
        if type(small) is cst.Raise:
            return True
        if type(small) is not cst.Expr or type(small.value) is not cst.Call:
            return False
        func = small.value.func
        resolved = self.resolve(func)
        return resolved in apis.PROCESS_EXITS or (
            resolved is None and type(func) is cst.Name and func.value in ("exit", "quit")
        )

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
        defs = self._defs
        return defs[-1] if defs else None

    def in_a_function(self, node: cst.CSTNode) -> bool | None:
        """Whether the walk met ``node`` inside a ``def`` (lambdas aside); None: it did not meet it."""
        parents, defs = self.parents, self._def_ids
        if id(node) not in parents:
            return None
        key = parents[id(node)]
        while key is not None:
            if key in defs:
                return True
            key = parents.get(key)
        return False

    @property
    def qualname(self) -> str:
        """``Trainer.train`` inside that method, "" at module level (lambdas are looked through)."""
        return self._qualname

    @property
    def module_level(self) -> bool:
        return not self.functions and not self.class_depth

    @property
    def conditional_in_loop(self) -> bool:
        """Inside an ``if`` within the innermost loop (code that may not run every iteration)."""
        return bool(self._ifs_in_loop and self._ifs_in_loop[-1])

    @property
    def every_outer_iteration(self) -> bool:
        """The innermost loop (just entered) sits in the body of another loop, outside any
        ``if`` of it: it runs in every iteration of that loop."""
        return len(self.loops) >= 2 and self.loops[-2] is not None and not self._ifs_in_loop[-2]

    @property
    def ifs_in_loop(self) -> list[cst.If]:
        """The ``if`` statements around here within the innermost loop (innermost last)."""
        count = self._ifs_in_loop[-1] if self._ifs_in_loop else 0
        return [c for c in self.conds if type(c) is cst.If][-count:] if count else []

    # -- traversal ----------------------------------------------------------------------

    def run(self, node: cst.CSTNode, parent: int | None = None) -> None:
        key = id(node)
        self.parents[key] = parent
        kind = type(node)
        plan = self._plans.get(kind)
        if plan is None:
            plan = self._plans[kind] = self._plan(kind)
        visitors, leavers, placed, opaque, read_children = plan
        if kind is cst.Name:
            value = node.value  # type: ignore[attr-defined]  # narrowed by ``kind``, the node's type, which mypy does not carry over to ``node``: a test of the node itself would cost every node (the hottest loop)
            self._taken.add(value)  # new import aliases must not collide with it
            qualified = self._bindings.get(value)  # what ImportTable.resolve gives for a Name
            if (qualified is not None and self._inspected(qualified)) or value in _LOOKED_AT:
                self._mark_to_visit(key)
        elif kind is cst.Attribute:
            self.qualified = qualified = self.resolve(node)
            if qualified is not None and self._inspected(qualified):
                self._mark_to_visit(key)
            if node.attr.value in self._attribute_names:  # type: ignore[attr-defined]  # narrowed by ``kind``, the node's type, which mypy does not carry over to ``node``: a test of the node itself would cost every node (the hottest loop)
                visitors = self._keyed_plan(kind, node.attr.value)  # type: ignore[attr-defined]  # as above
        elif kind is cst.Call:
            self.callee = callee = self.resolve(node.func)  # type: ignore[attr-defined]  # narrowed by ``kind``, the node's type, which mypy does not carry over to ``node``: a test of the node itself would cost every node (the hottest loop)
            if callee in self._callees:
                visitors = self._keyed_plan(kind, callee)
        elif kind is cst.SimpleString and any(word in node.value for word in _LOOKED_AT):  # type: ignore[attr-defined]  # as above
            self._mark_to_visit(key)
        # Most nodes are not scopes, loops or conditions: they skip the bookkeeping.
        if placed:
            self.moves += 1
            self._enter(node, kind)
        for visit in visitors:
            visit(node)
        if opaque:  # an import: names may now resolve to something else
            self.resolve.clear()
        else:
            for child in read_children(node):
                self.run(child, key)
        for leave in leavers:
            leave(node)
        if placed:
            self.moves += 1
            self._exit(kind)

    def _filtered(self, kind: type, keys: frozenset[str], hook: Hook) -> Hook:
        """``hook`` for every node of ``kind``, run for those of its keys (without the shortcuts)."""
        if kind is cst.Call:
            return lambda node: hook(node) if self.resolve(node.func) in keys else None
        return lambda node: hook(node) if node.attr.value in keys else None

    def _keyed_plan(self, kind: type, key: str) -> tuple[Hook, ...]:
        """The visit hooks for a node of this type and key: the type's own and the keyed
        ones, in the analyses' order."""
        plan = self._keyed_plans.get((kind, key))
        if plan is None:
            placed = sorted((*self.visitors.get(kind, ()), *self._keyed[kind][key]), key=lambda pair: pair[0])
            plan = self._keyed_plans[(kind, key)] = tuple(hook for _, hook in placed)
        return plan

    def _plan(self, kind: type) -> _Plan:
        """What the walk does at a node of this type: the analyses' hooks, whether it
        changes where the walk is, whether it is read whole (imports), its children."""
        return (
            tuple(hook for _, hook in self.visitors.get(kind, ())),
            tuple(self.leavers.get(kind, ())),
            kind in _PLACES,
            kind in _OPAQUE,
            children_reader(kind),
        )

    # -- where the rewrites need to look ------------------------------------------------------

    def _mark_to_visit(self, key: int | None) -> None:
        """Mark the node of id ``key`` and its ancestors as places the rewrites must visit."""
        to_visit, parents = self.to_visit, self.parents
        while key is not None and key not in to_visit:
            to_visit.add(key)
            key = parents.get(key)

    def mark_to_visit(self, node: cst.CSTNode) -> None:
        """Mark ``node`` and its ancestors as places the rewrites must visit."""
        self._mark_to_visit(id(node))

    def mark_fact_nodes(self) -> None:
        """Every node the fact sheet names is a place some rewrite looks at (the fields
        that cannot hold nodes are skipped, by their annotations, unless the shortcuts
        are off)."""
        for node in _nodes_in(self.facts, _field_names if speed.shortcuts() else _all_field_names):
            self.mark_to_visit(node)

    def _enter(self, node: cst.CSTNode, kind: type) -> None:
        if kind is cst.FunctionDef or kind is cst.Lambda:
            function = node if type(node) is cst.FunctionDef else None
            self.functions.append(function)
            self._enter_loop(None)
            if function is not None:
                self._def_ids.add(id(function))
                self._defs.append(function)
                self.scopes.append(function.name.value)
                self._qualname = ".".join(self.scopes)
        elif kind is cst.For or kind is cst.While:
            self._enter_loop(node)
        elif type(node) is cst.If:
            self.guard_depth += 1
            self.conds.append(node)
            if self._ifs_in_loop:
                self._ifs_in_loop[-1] += 1
        elif type(node) is cst.IfExp:
            self.conds.append(node)
        elif kind is cst.Try:
            self.guard_depth += 1
        elif type(node) is cst.ClassDef:
            self.class_depth += 1
            self.scopes.append(node.name.value)
            self._qualname = ".".join(self.scopes)

    def _exit(self, kind: type) -> None:
        if kind is cst.FunctionDef or kind is cst.Lambda:
            self.functions.pop()
            self._leave_loop()
            if kind is cst.FunctionDef:
                self._defs.pop()
                self.scopes.pop()
                self._qualname = ".".join(self.scopes)
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
            self._qualname = ".".join(self.scopes)

    def _enter_loop(self, node: cst.CSTNode | None) -> None:
        self.loops.append(node)
        self._ifs_in_loop.append(0)

    def _leave_loop(self) -> None:
        self.loops.pop()
        self._ifs_in_loop.pop()

    def finish(self) -> None:
        for analysis in self.analyses:
            analysis.finish()
        for kind in conclude_order(tuple(self._by_kind)):
            self._by_kind[kind].conclude()
        self.mark_fact_nodes()
        # The analyses and the walk refer to each other: let go of them now, so that what
        # they collected is freed as soon as the file is done, not by a garbage collection.
        self.analyses = []
        self._by_kind.clear()
        self.visitors.clear()
        self.leavers.clear()
        self._plans.clear()
        for keyed in self._keyed.values():
            keyed.clear()
        self._keyed_plans.clear()


IMPORTS = "imports"  # the analysis whose import table the walk resolves names with


def walk_order(kinds: Sequence[type[Analysis]]) -> list[type[Analysis]]:
    """The analyses in an order where each comes after what it ``reads`` (and every one
    after the imports, which the walk resolves names with); otherwise as given."""
    return _ordered(kinds, lambda kind: (*kind.reads, IMPORTS) if kind.name != IMPORTS else ())


@functools.cache
def conclude_order(kinds: tuple[type[Analysis], ...]) -> list[type[Analysis]]:
    """The analyses that conclude, each after the ones it ``conclude_reads``; otherwise in
    walk order."""
    concluding = [kind for kind in kinds if kind.conclude is not Analysis.conclude]
    named = {kind.name for kind in concluding} | {kind.fills for kind in concluding if kind.fills}
    return _ordered(concluding, lambda kind: tuple(name for name in kind.conclude_reads if name in named))


def _ordered(
    kinds: Sequence[type[Analysis]], needs: Callable[[type[Analysis]], tuple[str, ...]]
) -> list[type[Analysis]]:
    """A stable topological order: again and again, the first kind whose needs are placed
    (a name is placed once the analysis of that name, and every one filling that part, is)."""
    providers: dict[str, list[type[Analysis]]] = defaultdict(list)
    for kind in kinds:
        providers[kind.name].append(kind)
        if kind.fills:
            providers[kind.fills].append(kind)
    for kind in kinds:
        unknown = set(needs(kind)) - set(providers)
        if unknown:
            raise ValueError(f"{kind.__name__} reads {', '.join(sorted(unknown))}: no analysis of that name")
    placed: list[type[Analysis]] = []
    waiting = list(kinds)
    while waiting:
        ready = next(
            (
                kind
                for kind in waiting
                if all(p is kind or p in placed for name in needs(kind) for p in providers[name])
            ),
            None,
        )
        if ready is None:
            raise ValueError("the analyses read each other in a cycle: " + ", ".join(k.__name__ for k in waiting))
        waiting.remove(ready)
        placed.append(ready)
    return placed


class _ClassHooks(typing.NamedTuple):
    """The hooks an analysis class defines: (node type, method name) of each ``visit_<Node>``
    and ``leave_<Node>``, (method name, node type, keys) of each keyed hook, and (method
    name, unpack) of each ``@assignments`` hook."""

    visits: list[tuple[type, str]]
    leaves: list[tuple[type, str]]
    keyed: list[tuple[str, type, frozenset[str]]]
    assignments: list[tuple[str, bool]]


_CLASS_HOOKS: dict[type, _ClassHooks] = {}


def _class_hooks(kind: type[Analysis]) -> _ClassHooks:
    """Found once per class in what its classes define (not ``dir``: it lists every
    inherited name, and walks are per file)."""
    known = _CLASS_HOOKS.get(kind)
    if known is not None:
        return known
    defined: dict[str, object] = {}
    for klass in reversed(kind.__mro__[: kind.__mro__.index(Analysis)]):
        defined.update(vars(klass))
    found = _CLASS_HOOKS[kind] = _ClassHooks([], [], [], [])
    for attr in sorted(defined):
        if attr.startswith("visit_"):
            found.visits.append((getattr(cst, attr.removeprefix("visit_")), attr))
        elif attr.startswith("leave_"):
            found.leaves.append((getattr(cst, attr.removeprefix("leave_")), attr))
        if (keys := getattr(defined[attr], "walk_keys", None)) is not None:
            found.keyed.append((attr, *keys))
        if (unpack := getattr(defined[attr], "walk_assignments", None)) is not None:
            found.assignments.append((attr, unpack))
    return found


def _nodes_in(value: object, field_names: Callable[[type], tuple[str, ...]]) -> Iterator[cst.CSTNode]:
    """The nodes held anywhere in a fact sheet (its parts, their containers and records:
    of a record, the fields ``field_names`` gives)."""
    stack: list[typing.Any] = [value]  # any value: ``held`` says what each is, by its type
    while stack:
        current = stack.pop()
        kind = type(current)
        held = _HOLDS.get(kind)
        if held is None:
            held = _HOLDS[kind] = _holds(kind)
        if held is _Holds.NODE:
            yield current
        elif held is _Holds.MAPPING:
            for key, item in current.items():
                stack.append(key)
                stack.append(item)
        elif held is _Holds.ITEMS:
            stack.extend(current)
        elif held is _Holds.FIELDS:
            stack.extend(getattr(current, name) for name in field_names(kind))


class _Holds(enum.Enum):
    NOTHING = 0
    NODE = 1
    MAPPING = 2
    ITEMS = 3
    FIELDS = 4


# What values of a type hold, by type (the fact sheet is walked for every file).
_HOLDS: dict[type, _Holds] = {}


def _holds(kind: type) -> _Holds:
    if is_node_class(kind):
        return _Holds.NODE
    if issubclass(kind, dict):
        return _Holds.MAPPING
    if issubclass(kind, (list, tuple, set, frozenset)):
        return _Holds.ITEMS
    # A dataclass instance (a class itself is a value of type ``type``, which holds nothing).
    return _Holds.FIELDS if dataclasses.is_dataclass(kind) else _Holds.NOTHING


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """The fields of a fact record that may hold nodes (by their annotations: sets of
    names and tables of strings are many and hold none)."""
    fields = dataclasses.fields(kind)
    try:
        hints = typing.get_type_hints(kind)
    except (NameError, TypeError):  # an annotation that cannot be read: look everywhere
        return tuple(field.name for field in fields)
    return tuple(field.name for field in fields if _may_hold_nodes(hints.get(field.name)))


@functools.cache
def _all_field_names(kind: type) -> tuple[str, ...]:
    """Every field of a fact record (the search without the shortcut)."""
    return tuple(field.name for field in dataclasses.fields(kind))


_PLAIN = (str, int, float, bool, bytes, type(None))


def _may_hold_nodes(hint: object) -> bool:
    if hint in _PLAIN:
        return False
    origin = typing.get_origin(hint)
    if origin is None:
        return True  # a class: a node, a record, or something unknown
    if origin is typing.Literal:
        return False
    arguments = typing.get_args(hint)
    return not arguments or any(_may_hold_nodes(a) for a in arguments if a is not Ellipsis)
