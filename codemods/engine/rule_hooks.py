"""Runs the hooks of a concern's rules (engine/hooks.py) in the rewrite's one traversal: the
concern's list of rewrites (codemods/concerns.py) places ``RuleHooks(ctx, RULES)`` among the
others, so a rule registered in its concern's ``RULES`` runs with no other module edited.

What each name reaches is looked up in dicts built once per list of rules: a reference or a
call costs one lookup, whatever the number of rules.  The nodes the fact hooks run on are
read from each file's fact sheet as its traversal starts, and looked up by identity: only the
node types among them are handed to this concern at all, so a file whose facts name none
costs nothing more.  A node's hooks on its type, and before them the removal of the
statements that go whole from a line, run before its fact hooks."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import libcst as cst

from codemods.engine.hooks import OnCalls, OnFacts, OnNodes, OnReferences, RemovesStatements, hooks_of
from codemods.engine.rewriter import Concern, Context, StatementLineT
from codemods.engine.rule import Rule


@dataclass(frozen=True)
class _Dispatch:
    references: dict[str, tuple[OnReferences, ...]]
    calls: dict[str, tuple[OnCalls, ...]]
    # Hooks on references and calls into modules, and all their modules (one test skips them all).
    module_references: tuple[OnReferences, ...]
    reference_modules: tuple[str, ...]
    # Hooks on the names in modules that no hook looks at by name (``references`` and
    # ``calls`` hold none of them), and their modules.
    unhooked_references: tuple[OnReferences, ...]
    unhooked_modules: tuple[str, ...]
    module_calls: tuple[OnCalls, ...]
    call_modules: tuple[str, ...]
    # Hooks on the nodes a file's facts name, in the rules' order.
    on_facts: tuple[OnFacts, ...]
    # Hooks on every node of a type, by the type's name, in the rules' order.
    on_types: dict[str, tuple[OnNodes, ...]]
    # What says that a small statement goes whole from its line, in the rules' order.
    removals: tuple[RemovesStatements, ...]


@functools.cache
def _dispatch(rules: tuple[Rule, ...]) -> _Dispatch:
    references: defaultdict[str, list[OnReferences]] = defaultdict(list)
    calls: defaultdict[str, list[OnCalls]] = defaultdict(list)
    module_references: list[OnReferences] = []
    unhooked_references: list[OnReferences] = []
    module_calls: list[OnCalls] = []
    on_facts: list[OnFacts] = []
    on_types: defaultdict[str, list[OnNodes]] = defaultdict(list)
    removals: list[RemovesStatements] = []
    for rule in rules:
        for hook in hooks_of(rule):
            if isinstance(hook, OnFacts):
                on_facts.append(hook)
            elif isinstance(hook, OnNodes):
                for kind in sorted(hook.types):
                    on_types[kind].append(hook)
            elif isinstance(hook, RemovesStatements):
                removals.append(hook)
            elif isinstance(hook, OnReferences) and hook.unhooked:
                unhooked_references.append(hook)
            elif isinstance(hook, OnReferences):
                for name in hook.names:
                    references[name].append(hook)
                if hook.modules:
                    module_references.append(hook)
            else:
                for name in hook.names:
                    calls[name].append(hook)
                if hook.modules:
                    module_calls.append(hook)
    return _Dispatch(
        {name: tuple(hooks) for name, hooks in references.items()},
        {name: tuple(hooks) for name, hooks in calls.items()},
        tuple(module_references),
        tuple(module for hook in module_references for module in hook.modules),
        tuple(unhooked_references),
        tuple(module for hook in unhooked_references for module in hook.modules),
        tuple(module_calls),
        tuple(module for hook in module_calls for module in hook.modules),
        tuple(on_facts),
        {kind: tuple(hooks) for kind, hooks in on_types.items()},
        tuple(removals),
    )


class RuleHooks(Concern):
    """The hooks of ``rules``, as one concern of the traversal."""

    def __init__(self, ctx: Context[Any], rules: tuple[Rule, ...], *, under_xla_guard: bool = False) -> None:
        super().__init__(ctx)
        self.under_xla_guard = under_xla_guard
        dispatch = _dispatch(rules)
        self.references = dispatch.references
        self.module_references = dispatch.module_references
        self.reference_modules = dispatch.reference_modules
        self.unhooked_references = dispatch.unhooked_references
        self.unhooked_modules = dispatch.unhooked_modules
        self.calls = dispatch.calls
        self.module_calls = dispatch.module_calls
        self.call_modules = dispatch.call_modules
        self.on_types = dispatch.on_types
        self.removals = dispatch.removals
        # This file's nodes that fact hooks run on, by id (the sheet holds the nodes while
        # the traversal runs), each with its hooks in the rules' order.
        self.on_nodes: dict[int, list[OnFacts]] = {}
        self.node_kinds: set[str] = set()
        for hook in dispatch.on_facts:
            for node in hook.nodes(ctx.facts):
                self.on_nodes.setdefault(id(node), []).append(hook)
                self.node_kinds.add(type(node).__name__)

    def reference_handler(self) -> Callable[..., object] | None:
        return self.reference if self.references or self.module_references or self.unhooked_references else None

    def leave_handlers(self) -> Iterator[tuple[str, Callable[..., object]]]:
        if self.removals:
            yield "SimpleStatementLine", self.without_removed
            yield "SimpleStatementSuite", self.without_removed
        for kind in self.on_types:
            yield kind, self.typed_node
        if self.calls or self.call_modules:
            yield "Call", self.call
        for kind in self.node_kinds:
            yield kind, self.fact_node

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        hooks = self.references.get(qualified, ())
        if self.reference_modules and (dotted := qualified + ".").startswith(self.reference_modules):
            hooks += tuple(h for h in self.module_references if h not in hooks and dotted.startswith(h.modules))
        if (
            self.unhooked_modules
            and qualified.startswith(self.unhooked_modules)
            and qualified not in self.references
            and qualified not in self.calls
        ):
            hooks += tuple(h for h in self.unhooked_references if qualified.startswith(h.modules))
        for hook in hooks:
            updated = hook.run(self.ctx, original, updated, qualified)
        return updated

    def call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        callee = self.ctx.resolve(original.func)
        if callee is None:
            return updated
        hooks = self.calls.get(callee, ())
        if self.call_modules and callee.startswith(self.call_modules):
            hooks += tuple(h for h in self.module_calls if h not in hooks and callee.startswith(h.modules))
        result: cst.BaseExpression = updated
        for hook in hooks:
            if type(result) is not cst.Call:  # replaced by something else: the next hook has no call
                break
            result = hook.run(self.ctx, original, result, callee)
        return result

    def fact_node(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:
        hooks = self.on_nodes.get(id(original))
        if hooks is None:
            return updated
        result: object = updated
        for hook in hooks:
            if type(result) is not type(original):  # replaced by another kind of node: not the next hook's
                break
            result = hook.run(self.ctx, original, result)
        return result

    def typed_node(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:
        result: object = updated
        for hook in self.on_types[type(original).__name__]:
            if type(result) is not type(original):  # replaced by another kind of node: not the next hook's
                break
            result = hook.run(self.ctx, original, result)
        return result

    def without_removed(self, original: StatementLineT, updated: StatementLineT) -> StatementLineT:
        """The line without the small statements that go whole (``removes_statements``), rebuilt
        once whichever rules' they are; a line left with none goes (a ``pass`` after a colon).
        A fix that cannot be made keeps the line as it was."""
        said = [self._removal(statement) for statement in original.body]
        if not any(said):
            return updated
        kept: list[cst.BaseSmallStatement] = [small for small, removal in zip(updated.body, said) if removal is None]
        for statement, removal in zip(original.body, said):
            if removal is None:
                continue
            rule, message = removal
            done = self.ctx.fix(rule, statement, message, lambda: statement)  # noqa: B023 - fix() calls it at once
            if done is None:
                return updated
            self.ctx.imports.discard(statement)
        return self.ctx.line_keeping(updated, kept)

    def _removal(self, statement: cst.BaseSmallStatement) -> tuple[Rule, str] | None:
        for hook in self.removals:
            message = hook.says(self.ctx, statement)
            if message is not None:
                return hook.rule, message
        return None
