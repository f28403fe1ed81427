"""The rewrite framework: every concern runs inside one traversal of the parsed tree.

One traversal means every concern sees the *original* nodes that the fact sheet was
built from, and that a node a concern returns stays the same object in the output
tree, so a finding can point at it without a second analysis.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

import libcst as cst

from codemods.engine import speed
from codemods.engine.imports import ImportManager
from codemods.engine.nodemap import NodeMap
from codemods.engine.nodes import field_shapes, walk
from codemods.engine.positions import code_of
from codemods.engine.report import HeldCondition
from codemods.engine.rule import Rule, RuleSelection
from codemods.engine.walk import FactSheet
from codemods.targets import Target

# The fact sheet a context carries (codemods/facts.py: Facts).
SheetT = TypeVar("SheetT", bound=FactSheet)
NodeT = TypeVar("NodeT", bound=cst.CSTNode)
# What a fix builds: a node, or what a leave_ hook may return instead (several statements, none).
ReplacementT = TypeVar("ReplacementT", bound=cst.CSTNode | cst.FlattenSentinel[Any] | cst.RemovalSentinel)

OPTIONAL_XLA = "not fixed: this file imports torch_xla conditionally, so it keeps its own non-XLA path"
_ONE_LINE = re.compile(r"\s*\n\s*")


@dataclass(repr=False)
class PendingFinding:
    rule: Rule
    message: str
    fixed: bool
    original: cst.CSTNode | None  # where it is in the input
    result: cst.CSTNode | None = None  # where it is in the output, once known
    # Held back until the run's other files are seen: when it stands (engine.report.HeldFinding);
    # None for every other finding.
    held: HeldCondition[Any] | None = None


class Context(Generic[SheetT]):
    """What a concern may read (facts, target, parents) and do (fix, report, import)."""

    def __init__(
        self,
        facts: SheetT,
        target: Target,
        selection: RuleSelection,
        suppressed: Callable[[Rule, cst.CSTNode], bool],
    ) -> None:
        self.facts = facts
        self.target = target
        self.selection = selection
        self.suppressed = suppressed
        self.imports = ImportManager(
            table=facts.imports.table, taken_names=facts.imports.taken_names, can_add=not facts.imports.xla_optional
        )
        self.findings: list[PendingFinding] = []
        # By node: repoint_findings() runs for every node (NodeMap: CSTNode.__hash__ is Python code).
        self._awaiting_result: NodeMap[list[PendingFinding]] = NodeMap()
        self._tracked: NodeMap[cst.CSTNode | None] = NodeMap()
        self.ancestors: list[cst.CSTNode] = []
        self.dropped_statements: set[cst.CSTNode] = set()
        # Comment lines that go right after a statement: the footer of a block whose
        # statements were moved into the parent block.
        self.lines_after: NodeMap[Sequence[cst.EmptyLine]] = NodeMap()
        # How many `if <XLA test>` branches enclose the node the traversal is at: code there
        # is the project's own XLA path, which only the concerns that check it see.
        self.xla_guard_depth = 0
        self.track([facts.imports.anchor])

    # -- findings ---------------------------------------------------------------

    def enabled(self, rule: Rule, original: cst.CSTNode | None) -> bool:
        if not self.selection.enabled(rule.code):
            return False
        return original is None or not self.suppressed(rule, original)

    def _record(
        self,
        rule: Rule,
        original: cst.CSTNode | None,
        message: str,
        fixed: bool,
        result: cst.CSTNode | None,
        held: HeldCondition[Any] | None = None,
    ) -> None:
        # A finding is one line (code shown in it may span several).
        finding = PendingFinding(rule, _ONE_LINE.sub(" ", message), fixed, original, result, held)
        self.findings.append(finding)
        if result is None and original is not None:
            self._awaiting_result.setdefault(original, []).append(finding)

    def report(
        self, rule: Rule, original: cst.CSTNode | None, message: str, held: HeldCondition[Any] | None = None
    ) -> None:
        """A manual follow-up: the code stays as it was.  ``held``: the finding stands
        only if that condition on the run's other files says so (runner.release_held)."""
        if self.enabled(rule, original):
            self._record(rule, original, message, False, None, held)

    def fix(
        self,
        rule: Rule,
        original: cst.CSTNode | None,
        message: str,
        build: Callable[[], ReplacementT | None],
        *,
        result: Callable[[ReplacementT], cst.CSTNode] | None = None,
    ) -> ReplacementT | None:
        """Build a replacement and record the change; None (and a report saying why)
        when the rule is off, suppressed, or the replacement cannot be built here.

        ``result`` picks the node the finding points at in the output, when it is not
        the replacement of ``original`` (an inserted statement, say); ``{new}`` in the
        message becomes the code of that node."""
        if not self.enabled(rule, original):
            return None
        if self.facts.imports.xla_optional:
            self._record(rule, original, f"{_unfixed(message)} ({OPTIONAL_XLA})", False, None)
            return None
        replacement = build()
        if replacement is None:
            self._record(rule, original, f"{_unfixed(message)} (not fixed here)", False, None)
            return None
        anchor = result(replacement) if result else None
        shown = anchor if anchor is not None else replacement
        if "{new}" in message and isinstance(shown, cst.CSTNode):
            message = message.replace("{new}", self.code(shown))
        self._record(rule, original, message, True, anchor)
        return replacement

    def fix_or_keep(
        self,
        kept: NodeT,
        rule: Rule,
        original: cst.CSTNode | None,
        message: str,
        build: Callable[[], ReplacementT | None],
        *,
        result: Callable[[ReplacementT], cst.CSTNode] | None = None,
    ) -> ReplacementT | NodeT:
        """``fix``'s replacement, or ``kept`` (the node as the traversal hands it back) when
        there is none: how a leave hook that fixes one thing ends."""
        replacement = self.fix(rule, original, message, build, result=result)
        return replacement if replacement is not None else kept

    def fixed(self, rule: Rule, original: cst.CSTNode) -> bool:
        """Whether this file's rewrite has fixed ``rule`` at ``original`` so far: how a hook
        learns what another rule's hook made of a node the traversal left before (a loop's
        barrier hook, whether its loader was wrapped)."""
        return any(f.fixed and f.rule.code == rule.code and f.original is original for f in self.findings)

    def forget_fixes_inside(self, original: cst.CSTNode) -> None:
        """A wholesale replacement of ``original`` speaks for the changes inside it."""
        self._forget(original, fixed_only=True)

    def forget_removed(self, original: cst.CSTNode, updated: cst.CSTNode) -> None:
        """Code removed by a rewrite (a branch that can no longer run): nothing found
        in it is reported, and the imports its rewritten form used may go stale."""
        self._forget(original, fixed_only=False)
        self.imports.discard(updated)

    def _forget(self, original: cst.CSTNode, fixed_only: bool) -> None:
        inner = {id(n) for n in walk(original) if n is not original}
        if not inner:
            return
        dropped = [f for f in self.findings if id(f.original) in inner and (f.fixed or not fixed_only)]
        for finding in dropped:
            self.findings.remove(finding)
            pending = self._awaiting_result.get(finding.original)
            if pending and finding in pending:
                pending.remove(finding)

    def repoint_findings(self, original: cst.CSTNode, result: object) -> None:
        """Called as each node is left: findings on ``original`` now point at ``result``."""
        key = id(original)
        if key not in self._tracked.ids and key not in self._awaiting_result.ids:
            return
        node = result.nodes[0] if isinstance(result, cst.FlattenSentinel) and result.nodes else result
        if key in self._tracked.ids:
            self._tracked[original] = node if isinstance(node, cst.CSTNode) else None
        pending = self._awaiting_result.pop(original, None)
        if pending and isinstance(node, cst.CSTNode):
            for finding in pending:
                finding.result = node

    def track(self, nodes: Sequence[cst.CSTNode | None]) -> None:
        for node in nodes:
            if node is not None:
                self._tracked[node] = None

    def result_of(self, original: cst.CSTNode) -> cst.CSTNode | None:
        return self._tracked.get(original)

    def now_at(self, original: cst.CSTNode, node: cst.CSTNode | None) -> None:
        """Where a tracked node (``track``) stands now, said by a hook that rebuilds its block
        once the node was left (for a removed statement: the one that what followed it now
        follows, or None)."""
        self._tracked[original] = node

    def rebuilt(self, before: Sequence[cst.CSTNode], after: Sequence[cst.CSTNode]) -> None:
        """A block's statements ``before`` stand as ``after`` (position by position) once a hook
        rebuilt the block (a removed statement's comments carried to the next one): the tracked
        nodes and the findings' results that were one of them follow it (the seed line XLA515
        adds its device seed after, found by its result)."""
        if len(before) != len(after):
            return
        moved = {id(old): new for old, new in zip(before, after) if old is not new}
        if not moved:
            return
        for original in list(self._tracked):
            now = self._tracked.get(original)
            if now is not None and id(now) in moved:
                self._tracked[original] = moved[id(now)]
        for finding in self.findings:
            if finding.result is not None and id(finding.result) in moved:
                finding.result = moved[id(finding.result)]

    # -- reading ------------------------------------------------------------------

    def parent(self) -> cst.CSTNode | None:
        """The original parent of the node being left."""
        return self.ancestors[-2] if len(self.ancestors) >= 2 else None

    def resolve(self, node: cst.CSTNode | None) -> str | None:
        return self.facts.imports.table.resolve(node)

    @staticmethod
    def code(node: cst.CSTNode) -> str:
        return code_of(node).strip()

    # -- building -----------------------------------------------------------------

    def call(self, concept: str, args: Sequence[cst.Arg] = ()) -> cst.Call | None:
        """A call of the target's spelling of ``concept`` (adds its import)."""
        return self.imports.call(self.target.api(concept), args)

    def device(self) -> cst.Call | None:
        return self.call("device")

    def replace_callee(self, original: cst.Call, updated: cst.Call, concept: str) -> cst.Call | None:
        func = self.imports.expression(self.target.api(concept))
        if func is None:
            return None
        self.imports.discard(original.func)
        return updated.with_changes(func=func)

    def drop_statement(self, statement: cst.BaseStatement) -> None:
        """Remove a statement; its leading comments move to the next statement."""
        self.dropped_statements.add(statement)

    def line_keeping(self, line: StatementLineT, kept: Sequence[cst.BaseSmallStatement]) -> StatementLineT:
        """``line`` with only the small statements ``kept`` (the last without a semicolon); a
        line left with none goes (a ``pass`` after a colon)."""
        if kept:
            return line.with_changes(body=[*kept[:-1], kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if isinstance(line, cst.SimpleStatementSuite):
            return line.with_changes(body=[cst.Pass()])
        self.drop_statement(line)
        return line

    def keep_lines_after(self, statement: cst.BaseStatement, lines: Sequence[cst.EmptyLine]) -> None:
        """Put comment lines right after ``statement`` in the block it ends up in."""
        if lines:
            self.lines_after[statement] = lines


def _unfixed(message: str) -> str:
    """A fix's message when the fix is not made: "X -> {new}: why" (or "X -> `{new}`: why") reads
    "X: why"."""
    return re.sub(r"\s*->\s*(`?)\{new\}\1", "", message).replace("{new}", "the XLA form")


class Concern:
    """One concern's rewrites.  Methods named ``leave_<Node>(original, updated)`` run
    when the traversal leaves such a node; ``reference(original, updated, qualified)``
    runs for every Name/Attribute chain that resolves through the imports."""

    # Whether it also runs in code under an `if <XLA test>` (the project's own XLA path,
    # which the other concerns leave as already ported): the torch_xla names it calls.
    under_xla_guard = False

    def __init__(self, ctx: Context[Any]) -> None:
        self.ctx = ctx
        self.facts = ctx.facts

    def leave_handlers(self) -> Iterator[tuple[str, Callable[..., object]]]:
        """What runs as the traversal leaves a node, by the node type's name: the
        ``leave_<Node>`` methods (a concern that knows its nodes per file says so itself)."""
        for attr in _leave_hooks(type(self)):  # type: ignore[arg-type]  # functools.cache types its argument Hashable: a class is hashable, mypy's type[...] is not seen so
            yield attr.removeprefix("leave_"), getattr(self, attr)

    def reference_handler(self) -> Callable[..., object] | None:
        """What runs on each reference through the imports: ``reference``, if any."""
        return getattr(self, "reference", None)


_BLOCKS = (cst.IndentedBlock, cst.Module)
_REFERENCES = (cst.Name, cst.Attribute)


class Rewriter(cst.CSTTransformer):
    """Dispatches each node to the concerns, in their order, in a single traversal.

    It only goes where the analysis says a rewrite may look (``to_visit``: the fact sheet's
    nodes, references through the imports, and their ancestors; None: everywhere), and
    hands every other subtree back untouched: rebuilding nodes is most of a transform's
    cost."""

    def __init__(self, ctx: Context[Any], concerns: Sequence[Concern], to_visit: set[int] | None = None) -> None:
        super().__init__()
        self.ctx = ctx
        self.to_visit = to_visit if speed.shortcuts() else None  # None: LibCST's traversal, every node
        self.handlers: dict[str, list[Callable[..., object]]] = defaultdict(list)
        # The handlers that also run under an XLA test (Concern.under_xla_guard).
        self.guard_handlers: dict[str, list[Callable[..., object]]] = defaultdict(list)
        self.reference_handlers = [found for c in concerns if (found := c.reference_handler()) is not None]
        self.guard_reference_handlers = [
            found for c in concerns if c.under_xla_guard and (found := c.reference_handler()) is not None
        ]
        for concern in concerns:
            for kind, handler in concern.leave_handlers():
                self.handlers[kind].append(handler)
                if concern.under_xla_guard:
                    self.guard_handlers[kind].append(handler)
        self.guarded = {id(node) for node in ctx.facts.imports.xla_guarded}

    def transform(self, module: cst.Module) -> cst.Module:
        """The rewritten module.  With ``to_visit``, the traversal is this class's own: it
        enters only the nodes to visit, and a node whose children all come back as they were is
        kept, not rebuilt (LibCST's rebuilds every node it enters), so the statements
        nothing changed keep their identity and their printed text (positions.code_reusing)."""
        if self.to_visit is None:
            return module.visit(self)
        result = self._enter(module)
        assert type(result) is cst.Module  # what the rewrites make of a module is a module
        return result

    def _enter(self, node: cst.CSTNode) -> object:
        self.on_visit(node)
        to_visit = self.to_visit
        assert to_visit is not None
        changes: dict[str, object] = {}
        for name, shape in field_shapes(type(node)):
            value = getattr(node, name)
            if shape == "nodes" or type(value) is list or type(value) is tuple:
                if not any(id(item) in to_visit for item in value):
                    continue
                items: list[object] = []
                for item in value:
                    new = self._enter(item) if id(item) in to_visit else item
                    if type(new) is cst.FlattenSentinel:
                        items.extend(new.nodes)
                    elif new is not cst.RemovalSentinel.REMOVE:
                        items.append(new)
                if len(items) != len(value) or any(new is not old for new, old in zip(items, value)):
                    changes[name] = items
            elif id(value) in to_visit:
                new = self._enter(value)
                if new is cst.RemovalSentinel.REMOVE:
                    new = None if shape == "optional node" else cst.MaybeSentinel.DEFAULT
                if new is not value:
                    changes[name] = new
        return self.on_leave(node, node.with_changes(**changes) if changes else node)

    # This runs for every node of the file: keep it lean (type() over isinstance()).

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.ctx.ancestors.append(node)
        if self.to_visit is not None and id(node) not in self.to_visit:
            return False
        if id(node) in self.guarded:
            self.ctx.xla_guard_depth += 1
        return True

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> object:  # type: ignore[override]  # returns a node, a RemovalSentinel or a FlattenSentinel as libcst's does, typed object to cover hooks' results
        if self.to_visit is not None and id(original_node) not in self.to_visit:
            self.ctx.ancestors.pop()
            return updated_node
        result: object = updated_node
        kind = type(original_node)
        if kind in _BLOCKS and (self.ctx.dropped_statements or self.ctx.lines_after.ids):
            result = self._without_dropped(updated_node)
        guarded = self.ctx.xla_guard_depth > 0
        references = self.guard_reference_handlers if guarded else self.reference_handlers
        if kind in _REFERENCES and references:
            result = self._reference(original_node, result, references)
        for handler in (self.guard_handlers if guarded else self.handlers).get(kind.__name__, ()):
            if not _is_node(result):
                break
            result = handler(original_node, result)
        if id(original_node) in self.guarded:
            self.ctx.xla_guard_depth -= 1
        self.ctx.repoint_findings(original_node, result)
        self.ctx.ancestors.pop()
        return result

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """No per-field hooks are used: skip LibCST's lookup of them."""

    def _reference(self, original: cst.CSTNode, result: object, handlers: Sequence[Callable[..., object]]) -> object:
        """``original``: a Name or an Attribute."""
        parent = self.ctx.parent()
        if type(parent) in (cst.Attribute, cst.ImportAlias, cst.ImportFrom, cst.Param, cst.AsName):
            return result
        if type(parent) in (cst.Arg, cst.FunctionDef, cst.ClassDef) and not (
            type(parent) is cst.Arg and parent.value is original
        ):
            return result
        qualified = self.ctx.resolve(original)
        if qualified is None:
            return result
        for handler in handlers:
            if not _is_node(result):
                break
            result = handler(original, result, qualified)
        return result

    def _without_dropped(self, block: cst.CSTNode) -> cst.CSTNode:
        """``block``: an IndentedBlock or a Module."""
        assert type(block) is cst.IndentedBlock or type(block) is cst.Module
        dropped = self.ctx.dropped_statements
        rebuilt = without_statements(with_lines_after(block, self.ctx.lines_after), dropped)
        self.ctx.rebuilt([s for s in block.body if s not in dropped], rebuilt.body)
        return rebuilt


def _is_node(result: object) -> bool:
    """A handler's result is a node, not a sentinel (removal, several statements); exact
    tests: isinstance on LibCST's ABC-based classes is slow, and this runs per handler."""
    return type(result) is not cst.FlattenSentinel and result is not cst.RemovalSentinel.REMOVE


@functools.cache
def _leave_hooks(kind: type[Concern]) -> tuple[str, ...]:
    """The ``leave_<Node>`` methods of a concern class (``dir`` is slow; rewrites are per file)."""
    return tuple(attr for attr in dir(kind) if attr.startswith("leave_"))


# `x = value` or `x: T = value`: the rewrites that read an assignment's value take either.
AssignmentT = TypeVar("AssignmentT", cst.Assign, cst.AnnAssign)
# A line of simple statements, on its own line or after a colon (`if x: a; b`).
StatementLineT = TypeVar("StatementLineT", cst.SimpleStatementLine, cst.SimpleStatementSuite)


# The block helpers give back the kind of block they are given.  (Overloads, not a TypeVar
# constrained to the two: mypy cannot follow the loops of a function checked once per constraint.)
@overload
def with_lines_after(block: cst.Module, lines_after: NodeMap[Sequence[cst.EmptyLine]]) -> cst.Module: ...
@overload
def with_lines_after(block: cst.IndentedBlock, lines_after: NodeMap[Sequence[cst.EmptyLine]]) -> cst.IndentedBlock: ...
def with_lines_after(
    block: cst.IndentedBlock | cst.Module, lines_after: NodeMap[Sequence[cst.EmptyLine]]
) -> cst.IndentedBlock | cst.Module:
    """``block`` with the comment lines kept for its statements placed after them: they
    lead the next statement, or join the block's footer after the last one."""
    if not lines_after or not any(statement in lines_after for statement in block.body):
        return block
    body, footer = list(block.body), list(block.footer)
    for index, statement in enumerate(body):
        lines = lines_after.pop(statement, None)
        if not lines:
            continue
        following = body[index + 1] if index + 1 < len(body) else None
        if following is not None and hasattr(following, "leading_lines"):
            body[index + 1] = following.with_changes(leading_lines=[*lines, *following.leading_lines])
        else:
            footer = [*lines, *footer]
    return block.with_changes(body=body, footer=footer)


@overload
def without_statements(block: cst.Module, to_remove: set[cst.CSTNode]) -> cst.Module: ...
@overload
def without_statements(block: cst.IndentedBlock, to_remove: set[cst.CSTNode]) -> cst.IndentedBlock: ...
def without_statements(
    block: cst.IndentedBlock | cst.Module, to_remove: set[cst.CSTNode]
) -> cst.IndentedBlock | cst.Module:
    """``block`` minus the to_remove statements, whose leading comments move to the next
    statement.  After the last statement kept, they close the block (its footer: blank
    lines alone go); a ``pass`` is written only when nothing is left of an indented block."""
    if not any(statement in to_remove for statement in block.body):
        return block
    kept: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for statement in block.body:
        if statement in to_remove:
            carried.extend(getattr(statement, "leading_lines", ()))
            continue
        if carried and hasattr(statement, "leading_lines"):
            statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
            carried = []
        kept.append(statement)
    if carried and type(block) is cst.IndentedBlock:
        if not kept:
            kept.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried))
        elif any(line.comment is not None for line in carried):
            return block.with_changes(body=kept, footer=[*carried, *block.footer])
    elif carried:
        return block.with_changes(body=kept, footer=[*carried, *block.footer])
    return block.with_changes(body=kept)
