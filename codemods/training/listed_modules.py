"""Moves through a loop variable (obligation 2 of SPEC section 5): ``for m in [self.policy,
self.qf]: m.to(device)`` moves each element of the list, as ``self.policy.to(device)`` and
``self.qf.to(device)`` would.  The elements are read from a literal list or tuple, from a name of
the function bound to one, and from a property or method of the class that returns one
(``for m in self.modules:`` with ``@property def modules(self): return [self.policy, self.qf]``,
also a list it builds first and appends to: ``modules = [...]``, ``modules.append(self.alpha)``,
``return modules``).  A loop over anything else of the instance (``self.nets.values()``, a
property that builds its list another way) is a move the tool cannot trace: XLA213 names it
where an optimizer of the class is over a module the class may move that way."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted
from codemods.engine.positions import code_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from codemods.training.records import _Function

_APPENDS = frozenset({"append", "extend", "insert"})


def literal_names(node: cst.BaseExpression) -> tuple[str, ...] | None:
    """The names a literal list or tuple holds (``[self.policy, self.qf]``); None for any other
    value, or one that holds something other than a name (a call, a starred element)."""
    if type(node) is not cst.List and type(node) is not cst.Tuple:
        return None
    names = tuple(n for e in node.elements if type(e) is cst.Element and (n := dotted(e.value)) is not None)
    return names if names and len(names) == len(node.elements) else None


def _own_nodes(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """The nodes of ``function``'s body, not those of functions or classes defined in it."""
    found: list[cst.CSTNode] = []
    pending: list[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        found.append(node)
        pending.extend(
            child for child in node.children if type(child) is not cst.FunctionDef and type(child) is not cst.ClassDef
        )
    return found


def listed_in(function: cst.FunctionDef, name: str) -> tuple[str, ...] | None:
    """The names ``function`` puts in the list it binds to ``name``: a literal list or tuple, and
    the names it appends (``name.append(self.alpha)``, ``name.extend([...])``, ``name += [...]``);
    None where ``name`` is bound to anything else, or once more."""
    bound: tuple[str, ...] | None = None
    added: list[str] = []
    for node in _own_nodes(function):
        if type(node) is cst.Assign and any(dotted(t.target) == name for t in node.targets):
            if bound is not None or (bound := literal_names(node.value)) is None:
                return None
        elif type(node) is cst.AugAssign and dotted(node.target) == name:
            if (more := literal_names(node.value)) is None:
                return None
            added.extend(more)
        elif (
            type(node) is cst.Call
            and type(func := node.func) is cst.Attribute
            and func.attr.value in _APPENDS
            and dotted(func.value) == name
            and node.args
        ):
            value = node.args[-1].value
            more = (
                (held,) if func.attr.value != "extend" and (held := dotted(value)) is not None else literal_names(value)
            )
            if more is None:
                return None
            added.extend(more)
    return None if bound is None else (*bound, *added)


def returned_names(function: cst.FunctionDef) -> tuple[str, ...] | None:
    """The names in the list ``function`` returns (every return: a literal list or tuple of names,
    or a name it binds to one); None where any return is something else."""
    names: list[str] = []
    returns = [node for node in _own_nodes(function) if type(node) is cst.Return]
    for node in returns:
        if node.value is None:
            return None
        held = literal_names(node.value)
        if held is None and type(node.value) is cst.Name:
            held = listed_in(function, node.value.value)
        if held is None:
            return None
        names.extend(held)
    return tuple(dict.fromkeys(names)) or None


def listing_methods(node: cst.ClassDef) -> dict[str, tuple[str, ...]]:
    """The methods and properties of the class that return a list of its attributes
    (``modules`` -> ``("self.policy", "self.qf")``), by name."""
    found: dict[str, tuple[str, ...]] = {}
    for statement in node.body.body:
        if type(statement) is cst.FunctionDef and (names := returned_names(statement)) is not None:
            found[statement.name.value] = names
    return found


def iterated_names(
    iterable: cst.BaseExpression, function: cst.FunctionDef | None, methods: dict[str, tuple[str, ...]]
) -> tuple[str, ...] | None:
    """The names a ``for`` over ``iterable`` binds in turn: the elements of a literal list or
    tuple, of a name of ``function`` bound to one, or of what the property or method of the class
    (``methods``: listing_methods) returns (``self.modules``, ``self.modules()``)."""
    if (names := literal_names(iterable)) is not None:
        return names
    if type(iterable) is cst.Name and function is not None:
        return listed_in(function, iterable.value)
    if type(iterable) is cst.Call and not iterable.args:
        iterable = iterable.func
    if type(iterable) is cst.Attribute and dotted(iterable.value) == "self":
        return methods.get(iterable.attr.value)
    return None


def looped_over(loops: list[cst.CSTNode | None], name: str) -> cst.For | None:
    """The innermost ``for`` around the walk's place in the current function (``loops``: the
    walk's, innermost last; a function starts a new run at None) whose target is ``name``."""
    for loop in reversed(loops):
        if loop is None:
            return None
        if type(loop) is cst.For and type(loop.target) is cst.Name and loop.target.value == name:
            return loop
    return None


def untraced_loop_moves(qualname: str, held: list[str], functions: Iterable[_Function]) -> list[tuple[str, str]]:
    """In ``__init__`` (``qualname``) of a class, for an optimizer over a module it holds as the
    attributes ``held`` (``self.policy``): the moves the class's other methods make through a loop
    over a value of the instance the tool cannot read (what it iterates, the move as a finding
    names it), which may move that module after the optimizer was built."""
    if not qualname.endswith(".__init__") or not any(name.startswith("self.") for name in held):
        return []
    owner = qualname.rpartition(".")[0]
    return [
        (over, f"`{code_of(move)}` in `{fn.qualname}`")
        for fn in functions
        if fn.qualname.rpartition(".")[0] == owner and fn.qualname != qualname
        for over, move in fn.untraced_moves
    ]
