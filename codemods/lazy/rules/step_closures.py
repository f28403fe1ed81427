"""The step closure a logging statement in a training loop moves into (XLA701's fix).

A statement that only logs (``print``, ``logger.info``, ``tqdm.set_postfix``,
``writer.add_scalar``, f-strings into those) moves into ``xm.add_step_closure``: the
closure runs at the step barrier, after the step's graph, so its reads fetch values
already computed.  Everything the statement reads is evaluated now and passed in
(``args=(...)``): the receivers of the reads (``loss`` of ``loss.item()``) and every
other value (``step``, ``scheduler.get_last_lr()[0]``), so the closure prints exactly
what the statement printed, even though the loop has moved on when it runs.
"""

from __future__ import annotations

import dataclasses
import keyword
from typing import TYPE_CHECKING, Any

import libcst as cst

from codemods.engine.nodes import parents_of, walk, with_comma
from codemods.engine.positions import code_of

if TYPE_CHECKING:
    from codemods.engine.rewriter import Context
    from codemods.facts import Facts
    from codemods.lazy.facts import StepClosure

_LITERALS = (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)
# Wrappers around expressions: rebuilt field by field, their expressions hoisted.
_WRAPPERS = (
    cst.Arg,
    cst.Element,
    cst.StarredElement,
    cst.DictElement,
    cst.StarredDictElement,
    cst.FormattedStringExpression,
    cst.ComparisonTarget,
    cst.SubscriptElement,
    cst.Index,
    cst.Slice,
)
_KEPT_FIELDS = {
    (cst.Call, "func"),
    (cst.Attribute, "attr"),
    (cst.Arg, "keyword"),
    (cst.FormattedStringExpression, "format_spec"),
}
_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def closure_parts(facts: Facts, call: cst.Call, closure: StepClosure) -> tuple[Hoisting, cst.CSTNode]:
    """The closure's parameters and values, and its body, from the statement as it was."""
    values = {id(facts.host_reads.reads[read].value) for read in closure.reads}
    parents = parents_of(call)
    on_path: set[int] = set()
    for node in walk(call):
        if id(node) in values:
            current = parents.get(id(node))
            while current is not None and id(current) not in on_path:
                on_path.add(id(current))
                current = parents.get(id(current))
    hoisting = Hoisting(values, on_path)
    body = hoisting.rebuild(call)
    hoisting.rename_clashes(_names_used(body) - {n.value for n in walk(body) if id(n) in hoisting.made})  # type: ignore[attr-defined]  # ids in hoisting.made are the Name nodes it made
    return hoisting, hoisting.rebuild(call)


def step_closure(
    ctx: Context[Any],
    hoisting: Hoisting,
    body: cst.CSTNode,
    rewritten: dict[int, cst.CSTNode],
    changed_later: frozenset[str] = frozenset(),
) -> cst.Call | None:
    """``xm.add_step_closure(lambda <params>: <body>, args=(<values>))``; ``rewritten``:
    what other rewrites made of the values (by the original value's id); ``changed_later``:
    the tensors the step changes in place after the statement, passed as copies
    (``loss.detach().clone()``: the closure runs at the barrier, after the change)."""
    params = [cst.Param(cst.Name(name)) for name in hoisting.names]
    function = cst.Lambda(params=cst.Parameters(params=params), body=body)  # type: ignore[arg-type]  # rebuild() of an expression returns an expression (typed CSTNode for all nodes)
    passed: list[cst.BaseExpression] = [rewritten.get(id(value), value) for value in hoisting.values]  # type: ignore[misc]  # hoisted values are expressions (typed CSTNode)
    elements = [
        cst.Element(_copied(new) if code_of(value) in changed_later else new)
        for value, new in zip(hoisting.values, passed)
    ]
    elements = [with_comma(e) if i < len(elements) - 1 else e for i, e in enumerate(elements)]  # type: ignore[arg-type,misc]  # with_comma is typed for Arg; an Element has the same comma field and with_changes
    if len(elements) == 1:
        elements = [elements[0].with_changes(comma=cst.Comma())]
    args = cst.Arg(cst.Tuple(elements), keyword=cst.Name("args"), equal=_NO_SPACE)
    return ctx.call("add_step_closure", [with_comma(cst.Arg(function)), args])


def _copied(value: cst.BaseExpression) -> cst.Call:
    """``value.detach().clone()``: the tensor as it is now, which later in-place changes leave alone."""
    detached = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("detach")))
    return cst.Call(func=cst.Attribute(value=detached, attr=cst.Name("clone")))


class Hoisting:
    """Rebuilds a logging call as a closure body: the reads' values and every other
    non-literal value become parameters, in order of appearance."""

    def __init__(self, values: set[int], on_path: set[int]) -> None:
        self.read_values = values
        self.on_path = on_path
        self.names: list[str] = []
        self.values: list[cst.BaseExpression] = []
        self.by_code: dict[str, str] = {}
        self.renamed: dict[str, str] = {}
        self.made: set[int] = set()  # the parameter names put into the body

    def rename_clashes(self, used: set[str]) -> None:
        """Parameters must not hide a name the body still uses (``print``, a callee)."""
        taken = set(used)
        for name in list(self.names):
            if name in used:
                self.renamed[name] = _fresh(name, taken | set(self.names))
                taken.add(self.renamed[name])
        self.names, self.values, self.by_code, self.made = [], [], {}, set()

    def _param(self, node: cst.BaseExpression) -> cst.Name:
        code = code_of(node)
        name = self.by_code.get(code)
        if name is None:
            base = (
                node.value
                if isinstance(node, cst.Name)
                else node.attr.value
                if isinstance(node, cst.Attribute)
                else "value"
            )
            name = self.renamed.get(base, base)
            name = _fresh(name, set(self.names)) if name in self.names or keyword.iskeyword(name) else name
            self.by_code[code] = name
            self.names.append(name)
            self.values.append(node)
        param = cst.Name(name)
        self.made.add(id(param))
        return param

    def rebuild(self, node: cst.CSTNode) -> cst.CSTNode:
        if id(node) in self.read_values:
            return self._param(node)  # type: ignore[arg-type]  # read_values holds the ids of expressions only
        changes: dict[str, object] = {}
        for name in _field_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                changes[name] = self._child(node, name, value)
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, cst.CSTNode) for v in value):
                changes[name] = [self._child(node, name, v) for v in value]
        return node.with_changes(**changes)

    def _child(self, parent: cst.CSTNode, field: str, node: cst.CSTNode) -> cst.CSTNode:
        if type(parent) is cst.ConcatenatedString:  # its parts must stay strings: hoist from inside them
            return node if _literal(node) else self.rebuild(node)  # type: ignore[arg-type]  # a ConcatenatedString's children are strings (expressions)
        if id(node) in self.read_values or id(node) in self.on_path or isinstance(node, _WRAPPERS):
            if (type(parent), field) in _KEPT_FIELDS and id(node) not in self.on_path:
                return node
            return self.rebuild(node)
        if (type(parent), field) in _KEPT_FIELDS or not isinstance(node, cst.BaseExpression) or _literal(node):
            return node
        return self._param(node)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """``dataclasses.fields`` of a node type, by name (found once per type: it builds its tuple at every call)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def rewritten_values(original: cst.CSTNode, updated: cst.CSTNode, hoisting: Hoisting) -> dict[int, cst.CSTNode] | None:
    """Where other rewrites changed a logging statement only inside values the closure
    passes in (``xm.get_ordinal()`` -> ``xr.global_ordinal()`` among the printed values):
    what each such value became, by the original's id; None where they changed anything
    else.  (So a second run does not make a closure the first run did not.)"""
    holes = {id(value) for value in hoisting.values}
    rewritten: dict[int, cst.CSTNode] = {}

    def same(a: object, b: object) -> bool:
        if a is b:
            return True
        if isinstance(a, cst.CSTNode) and isinstance(b, cst.CSTNode):
            if id(a) in holes:
                rewritten[id(a)] = b
                return True
            return type(a) is type(b) and all(
                same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
            )
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b

    return rewritten if same(original, updated) else None


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.ConcatenatedString):
        return _literal(node.left) and _literal(node.right)
    if isinstance(node, cst.FormattedString):
        return not any(isinstance(p, cst.FormattedStringExpression) for p in node.parts)
    return False


def _names_used(node: cst.CSTNode) -> set[str]:
    """Names the code reads (not attribute names or keywords of arguments)."""
    skipped = {id(n.attr) for n in walk(node) if type(n) is cst.Attribute}
    skipped.update(id(n.keyword) for n in walk(node) if type(n) is cst.Arg and n.keyword is not None)
    return {n.value for n in walk(node) if type(n) is cst.Name and id(n) not in skipped}


def _fresh(name: str, taken: set[str]) -> str:
    index = 2
    while f"{name}_{index}" in taken:
        index += 1
    return f"{name}_{index}"
