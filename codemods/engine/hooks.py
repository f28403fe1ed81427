"""A rule's hooks: the code that finds its cases in the rewrite's one traversal (and fixes
them), written in the rule's own module, next to its code, severity, why and cases.

A hook says what it looks at: by qualified name through the file's imports, references
(a Name or Attribute chain that resolves to ``torch.cuda.manual_seed``, whatever the alias,
or to anything in a module: ``apex.``) or calls (their callee's name, or a module the callee
is in); or the nodes a concern's facts name (``torch.save`` calls xm.save can take: the
checkpoint facts' ``saves``); or every node of some types (an ``if``, the module); or the
small statements that go whole from their line.  It is handed the rewrite's context (the target and its names,
the fact sheet ``ctx.facts``, ``ctx.fix``/``ctx.report``, ``ctx.code``), the node as it was
(``original``: findings point at it, and the facts name it) and as the traversal has made it
so far (``updated``: what it returns, or its replacement), and on a name or a call the name it
resolved to::

    CUDA_SEED = Rule(code="XLA505", ...)

    reports_references(CUDA_SEED, "torch.cuda.manual_seed torch.cuda.seed", "seeds only CUDA generators; ...")

    @on_calls(XLA_RELEASE_NAMES, names=...)
    def _port(ctx, original, updated, callee): ...

    @on_facts(SAVE_WHOLE_MODULE, nodes=lambda facts: facts.checkpoint.whole_module_saves)
    def _report(ctx, original, updated): ...

    @reports_facts(FSDP_MANUAL, nodes=lambda facts: facts.fsdp.fully_shards)
    def _fully_shard(ctx, original): return "..."  # a hook that only reports: what it says

    @on_nodes(SET_DEVICE, types="If")
    def _guard(ctx, original, updated): ...  # every node of a type the traversal leaves

    @removes_statements(SET_DEVICE)
    def _set_device(ctx, statement): ...  # what it says when a statement goes whole from its line, or None

A hook enters itself under its rule's code when its module is imported (as a rule enters
itself by its code: ``rule.rule_of``), so the rule is picked up by its registration in the
concern's ``rules`` alone: the concern's list of rewrites runs the hooks of its ``RULES``
(``engine.rule_hooks.RuleHooks``), and the walk visits every name a hook looks at
(``looked_at``; a fact hook's nodes are the sheet's, which it visits anyway).  A rule module
sits above the facts (docs/dev/architecture.md#layers): its hooks read them through
``ctx.facts``, and it imports the sheet's types only under ``TYPE_CHECKING``.

This module imports no LibCST at run time: the command line loads the rule modules to
validate codes, before it knows whether any file needs parsing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from codemods.engine.rule import Rule

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context


NodeT = TypeVar("NodeT", bound="cst.CSTNode")


class ReferenceHook(Protocol):
    """Runs on a reference that resolves to one of its names; returns ``updated`` or its
    replacement."""

    def __call__(
        self, ctx: Context[Any], original: cst.CSTNode, updated: cst.CSTNode, qualified: str
    ) -> cst.CSTNode: ...


class CallHook(Protocol):
    """Runs on a call whose callee resolves to one of its names (or into one of its
    modules); returns ``updated`` or what replaces the call."""

    def __call__(self, ctx: Context[Any], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression: ...


class FactHook(Protocol):
    """Runs on a node the fact sheet names (``OnFacts.nodes``); returns ``updated`` or what
    replaces it."""

    def __call__(
        self, ctx: Context[Any], original: Any, updated: Any
    ) -> cst.CSTNode | cst.FlattenSentinel[Any] | cst.RemovalSentinel: ...


class StatementRemoval(Protocol):
    """Says what ``rule`` says as a small statement of a line goes whole (``removes_statements``),
    or None: it stays."""

    def __call__(self, ctx: Context[Any], statement: cst.BaseSmallStatement) -> str | None: ...


class FactMessage(Protocol):
    """Says what a hook that only reports (``reports_facts``) reports at a node the fact sheet
    names, handed the node as it was."""

    def __call__(self, ctx: Context[Any], original: Any) -> str: ...


# A hook is itself (eq=False): one that names a module and some of its names runs once on each.
@dataclass(frozen=True, kw_only=True, eq=False)
class OnReferences:
    rule: Rule
    names: frozenset[str]
    # Names in these modules ("apex."): each prefix ends with a dot.
    modules: tuple[str, ...]
    run: ReferenceHook
    # Only names in ``modules`` that no hook of the concern's rules looks at by name (a rule
    # that reports what the others leave: XLA506's "any other torch.cuda API").
    unhooked: bool = False


@dataclass(frozen=True, kw_only=True, eq=False)
class OnCalls:
    rule: Rule
    names: frozenset[str]
    # Callees in these modules ("torch_xla.runtime."): each prefix ends with a dot.
    modules: tuple[str, ...]
    run: CallHook


@dataclass(frozen=True, kw_only=True, eq=False)
class OnFacts:
    rule: Rule
    # The nodes it runs on, read from a file's fact sheet (a set of them, or a dict keyed by
    # them): the sheet is the ``Facts`` of codemods/facts.py, which the engine does not import.
    nodes: Callable[[Any], Collection[cst.CSTNode]]
    run: FactHook


@dataclass(frozen=True, kw_only=True, eq=False)
class OnNodes:
    rule: Rule
    # The node types it runs on, by class name (a rule module loads no LibCST): every node of
    # them the traversal leaves, as a Fixit rule's ``leave_If``.
    types: frozenset[str]
    run: FactHook


@dataclass(frozen=True, kw_only=True, eq=False)
class RemovesStatements:
    rule: Rule
    says: StatementRemoval


Hook = OnReferences | OnCalls | OnFacts | OnNodes | RemovesStatements

# Every hook by its rule's code, entered when the rule's module makes it.
_BY_CODE: dict[str, list[Hook]] = defaultdict(list)
# Every name and module a hook looks at: the walk marks their references for the rewrite.
_NAMES: set[str] = set()
_MODULES: list[str] = []
_modules: tuple[str, ...] = ()


def hooks_of(rule: Rule) -> tuple[Hook, ...]:
    """The hooks of ``rule``, in the order its module makes them."""
    return tuple(_BY_CODE.get(rule.code, ()))


def looked_at(qualified: str) -> bool:
    """Whether a hook looks at references that resolve to ``qualified``."""
    return qualified in _NAMES or (bool(_modules) and qualified.startswith(_modules))


def _enter(hook: Hook) -> None:
    global _modules
    _BY_CODE[hook.rule.code].append(hook)
    if not isinstance(hook, (OnReferences, OnCalls)):
        return
    _NAMES.update(hook.names)
    if hook.modules:
        _MODULES.extend(hook.modules)
        _modules = tuple(_MODULES)


def _names(names: str | frozenset[str]) -> frozenset[str]:
    return frozenset(names.split()) if isinstance(names, str) else names


def _modules_of(modules: tuple[str, ...]) -> tuple[str, ...]:
    if any(not module.endswith(".") for module in modules):
        raise ValueError(f"a module a hook looks into ends with a dot: {modules}")
    return modules


def on_references(
    rule: Rule, *, names: str | frozenset[str] = frozenset(), modules: tuple[str, ...] = (), unhooked: bool = False
) -> Callable[[ReferenceHook], ReferenceHook]:
    """A decorator: the function is ``rule``'s hook on references to ``names`` (a
    space-separated string, or a set) or to anything in ``modules`` (each ending with a dot);
    ``unhooked``: only to the names in ``modules`` that no hook of the concern's rules looks
    at by name (references or calls), which those rules report."""

    def enter(run: ReferenceHook) -> ReferenceHook:
        if unhooked and (names or not modules):
            raise ValueError("a hook on the unhooked names of modules names modules only")
        _enter(OnReferences(rule=rule, names=_names(names), modules=_modules_of(modules), run=run, unhooked=unhooked))
        return run

    return enter


def on_calls(
    rule: Rule, *, names: str | frozenset[str] = frozenset(), modules: tuple[str, ...] = ()
) -> Callable[[CallHook], CallHook]:
    """A decorator: the function is ``rule``'s hook on calls of ``names`` (a space-separated
    string, or a set) or of anything in ``modules`` (each ending with a dot)."""

    def enter(run: CallHook) -> CallHook:
        _enter(OnCalls(rule=rule, names=_names(names), modules=_modules_of(modules), run=run))
        return run

    return enter


def reports_references(rule: Rule, names: str, says: str) -> None:
    """The commonest hook: every reference to ``names`` is reported as "`<code>` says", the
    advice written with torch_xla 2.9's names and said in the target's (Target.advice)."""

    def report(ctx: Context[Any], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        ctx.report(rule, original, f"`{ctx.code(original)}` {ctx.target.advice(says)}")
        return updated

    _enter(OnReferences(rule=rule, names=_names(names), modules=(), run=report))


def on_facts(rule: Rule, *, nodes: Callable[[Any], Collection[cst.CSTNode]]) -> Callable[[FactHook], FactHook]:
    """A decorator: the function is ``rule``'s hook on the nodes ``nodes`` reads from a
    file's fact sheet (``lambda facts: facts.checkpoint.saves``), run as the traversal
    leaves each of them.  The hook reads the rest of the sheet as ``ctx.facts``."""

    def enter(run: FactHook) -> FactHook:
        _enter(OnFacts(rule=rule, nodes=nodes, run=run))
        return run

    return enter


def reports_facts(
    rule: Rule, *, nodes: Callable[[Any], Collection[cst.CSTNode]]
) -> Callable[[FactMessage], FactMessage]:
    """A decorator for the commonest fact hook, one that only reports: the function says what
    ``rule`` reports at each node ``nodes`` reads from the fact sheet (as ``on_facts``), and
    the node is kept as it is."""

    def enter(says: FactMessage) -> FactMessage:
        def report(ctx: Context[Any], original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
            ctx.report(rule, original, says(ctx, original))
            return updated

        _enter(OnFacts(rule=rule, nodes=nodes, run=report))
        return says

    return enter


def on_nodes(rule: Rule, *, types: str) -> Callable[[FactHook], FactHook]:
    """A decorator: the function is ``rule``'s hook on every node of ``types`` (class names,
    space-separated: ``"If"``, ``"Module"``) that the traversal leaves, before the fact hooks of
    the node: for a rule that must look at each of them (the facts name none), or at the module
    once every node of it is left (a report of what the analyses concluded of the whole file).
    The traversal enters only the nodes that hold a node the facts name or a name a hook looks
    at (and always the module): a hook on a type sees those of its nodes."""

    def enter(run: FactHook) -> FactHook:
        _enter(OnNodes(rule=rule, types=frozenset(types.split()), run=run))
        return run

    return enter


def removes_statements(rule: Rule) -> Callable[[StatementRemoval], StatementRemoval]:
    """A decorator: the function says what ``rule`` says of a small statement that goes whole
    from its line (``torch.cuda.set_device(rank)``), or None.  The statements of every such
    hook of the concern's rules are removed from their line at once, before any other hook of
    the line runs (engine.rule_hooks): a line that holds nothing else goes (a block left empty
    gets a ``pass``), and one whose fix cannot be made keeps the line as it was.  It sees the
    lines the traversal enters (``on_nodes``)."""

    def enter(says: StatementRemoval) -> StatementRemoval:
        _enter(RemovesStatements(rule=rule, says=says))
        return says

    return enter


def of_types(nodes: Iterable[NodeT], types: str) -> list[NodeT]:
    """The ``nodes`` of these node types (their class names, space-separated: a rule module
    loads no LibCST), for a fact hook that takes only some of the shapes a fact holds:
    ``nodes=lambda facts: of_types(facts.lightning.settings, "SimpleString Integer")``."""
    names = types.split()
    return [node for node in nodes if type(node).__name__ in names]
