"""The classes of a file that run a compiled extension's op only on CUDA: every use the
file makes of the class (``FusedAct.apply(x, b)``, ``op_cuda = _Loss.apply``) is under a
test never true on XLA (``if torch.cuda.is_available() and device != "cpu":``, ``if
logits.is_cuda:``, as XLA105 says of it), inside such a class, or bound at module level to
a name whose uses are all of that kind, and no other file of the project names it.  On an
XLA host the file takes its other branch (a torch fallback, ``F.leaky_relu``), so the op
never runs there.  A class the file never uses is for other files: it stays: the CUDA-only concern does not report it (XLA512)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

# Whether a test is never true on XLA, given the function (qualified name, "" at module level) it is in.
NeverTrue = Callable[[cst.BaseExpression, str], bool]
# Whether another file of the project names a name (None: the project's files are not known).
MentionedElsewhere = Callable[[str], "bool | None"]


@dataclass(frozen=True)
class _Use:
    name: str
    tests: tuple[cst.BaseExpression, ...]  # what must be true for it to run
    scope: str  # the function it is in ("" at module level)
    classes: tuple[str, ...]  # the module-level classes it is in
    bound: str | None  # the module-level name it is assigned to (``x = Cls.apply``)


def _uses(module: cst.Module, names: set[str]) -> Iterator[_Use]:
    """Every reading of one of ``names`` in the module, with the tests it runs under."""

    def visit(
        node: cst.CSTNode, tests: tuple[cst.BaseExpression, ...], scope: tuple[str, ...], bound: str | None
    ) -> Iterator[_Use]:
        if type(node) is cst.Name:
            if node.value in names:
                classes = tuple(s for s in scope[:1] if s in top_classes)
                yield _Use(node.value, tests, ".".join(scope), classes, bound)
            return
        if isinstance(node, (cst.ClassDef, cst.FunctionDef)):
            parts: list[cst.CSTNode] = [*node.decorators]
            if isinstance(node, cst.ClassDef):
                parts += node.bases
            for part in parts:
                yield from visit(part, tests, scope, None)
            yield from visit(node.body, tests, (*scope, node.name.value), None)
            return
        if isinstance(node, (cst.If, cst.IfExp)):
            yield from visit(node.test, tests, scope, bound)
            yield from visit(node.body, (*tests, node.test), scope, bound)
            if node.orelse is not None:
                yield from visit(node.orelse, tests, scope, bound)
            return
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            yield from visit(node.left, tests, scope, bound)
            yield from visit(node.right, (*tests, node.left), scope, bound)
            return
        if isinstance(node, cst.Assign) and not scope:
            target = node.targets[0].target if len(node.targets) == 1 else None
            yield from visit(node.value, tests, scope, target.value if isinstance(target, cst.Name) else None)
            return
        for child in node.children:
            yield from visit(child, tests, scope, bound)

    top_classes = {s.name.value for s in module.body if type(s) is cst.ClassDef}
    for statement in module.body:
        yield from visit(statement, (), (), None)


def _classes_of(module: cst.Module, calls: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, str]:
    """The module-level class each call is in (calls outside a class left out)."""
    wanted = {id(call): call for call in calls}
    found: dict[cst.CSTNode, str] = {}

    def visit(node: cst.CSTNode, name: str) -> None:
        if id(node) in wanted:
            found[wanted[id(node)]] = name
        for child in node.children:
            visit(child, name)

    for statement in module.body:
        if type(statement) is cst.ClassDef:
            visit(statement, statement.name.value)
    return found


def cuda_only_calls(
    module: cst.Module, calls: Iterable[cst.CSTNode], never_true: NeverTrue, elsewhere: MentionedElsewhere
) -> set[cst.CSTNode]:
    """The calls (in a forward of a module-level class) that run only where a test never true
    on XLA holds: the module reaches their class only under such tests (see the docstring)."""
    classes = _classes_of(module, calls)
    if not classes:
        return set()
    # Module-level aliases of a class or of its attributes (``op_cuda = _Loss.apply``).
    aliases: dict[str, str] = {}
    candidates = set(classes.values())
    uses = list(_uses(module, candidates))
    for use in uses:
        if use.bound is not None and not use.tests and not use.classes:
            aliases[use.bound] = use.name
    if aliases:
        uses += list(_uses(module, set(aliases)))
    by_name: dict[str, list[_Use]] = {}
    for use in uses:
        by_name.setdefault(use.name, []).append(use)
    # A name the file never uses outside its own class is for other files: it stays.
    dead: set[str] = {
        name
        for name in (*candidates, *aliases)
        if any(name not in use.classes for use in by_name.get(name, ())) and elsewhere(name) is not True
    }
    changed = True
    while changed:  # the names some use keeps alive leave, until none does
        changed = False
        for name in sorted(dead):
            for use in by_name.get(name, ()):
                if use.bound is not None and use.bound in aliases and use.bound in dead:
                    continue  # bound to an alias still dead
                if any(c in dead for c in use.classes):
                    continue  # inside a class that never runs on XLA
                if any(never_true(test, use.scope) for test in use.tests):
                    continue
                dead.discard(name)
                changed = True
                break
    return {call for call, name in classes.items() if name in dead}
