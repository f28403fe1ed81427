"""Moves through a loop over the instance's own attributes (obligation 2 of SPEC section 5): a
holder's method that moves every module it holds,

    def to(self, device):
        for key, val in self.__dict__.items():
            if isinstance(val, nn.Module):
                val.to(device)

(also ``self.__dict__.values()``, ``vars(self).items()``, ``vars(self).values()``) moves each
attribute of the instance, as ``self.nnet.to(device)`` and ``self.nnet_ema.to(device)`` would.
Which attributes those are is read from the class: each ``self.name`` a method of it binds
(``self.nnet = nnet``, ``self.optimizer, self.nnet = optimizer, nnet``) and each field a
dataclass declares at class level (``nnet: nn.Module = None``).  On XLA every such move makes
new Parameter objects, so an optimizer built before it steps stale CPU copies (XLA203)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, walk

if TYPE_CHECKING:
    from collections.abc import Sequence

_VIEWS = frozenset({"items", "values"})


def instance_attributes(node: cst.ClassDef) -> tuple[str, ...]:
    """The attributes of the class's instances, as ``self.name``: those its methods bind, and
    the annotated fields of its body (a dataclass's, which its generated ``__init__`` binds)."""
    found: dict[str, None] = {}
    for statement in node.body.body:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.AnnAssign and type(small.target) is cst.Name:
                    found[f"self.{small.target.value}"] = None
        elif type(statement) is cst.FunctionDef:
            for sub in walk(statement.body):
                targets: list[cst.BaseExpression] = []
                if type(sub) is cst.Assign:
                    targets = [t.target for t in sub.targets]
                elif type(sub) is cst.AnnAssign or type(sub) is cst.AugAssign:
                    targets = [sub.target]
                for target in targets:
                    for each in _unpacked(target):
                        if type(each) is cst.Attribute and dotted(each.value) == "self":
                            found[f"self.{each.attr.value}"] = None
    return tuple(found)


def _unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [part for e in target.elements for part in _unpacked(e.value)]
    return [target]


def _values_of_self(iterable: cst.BaseExpression) -> str | None:
    """``items`` or ``values`` for ``self.__dict__.items()``, ``vars(self).values()``; None
    for any other iterable."""
    if not (type(iterable) is cst.Call and not iterable.args and type(iterable.func) is cst.Attribute):
        return None
    view, of = iterable.func.attr.value, iterable.func.value
    if view not in _VIEWS:
        return None
    if dotted(of) == "self.__dict__" or (
        type(of) is cst.Call and dotted(of.func) == "vars" and len(of.args) == 1 and dotted(of.args[0].value) == "self"
    ):
        return view
    return None


def over_instance_values(loops: Sequence[cst.CSTNode | None], name: str) -> bool:
    """Whether ``name`` is bound, in the current function, by a ``for`` over the instance's
    attribute values: ``for val in self.__dict__.values()``, ``for key, val in
    vars(self).items()`` (``loops``: the walk's, innermost last; None at a function boundary)."""
    for loop in reversed(loops):
        if loop is None:
            return False
        if type(loop) is not cst.For:
            continue
        view = _values_of_self(loop.iter)
        target = loop.target
        bound: str | None
        if view == "values" and type(target) is cst.Name:
            bound = target.value
        elif view == "items" and type(target) is cst.Tuple and len(target.elements) == 2:
            value = target.elements[1].value
            bound = value.value if type(value) is cst.Name else None
        else:
            bound = None
        if bound == name:
            return True
        if name in _bound_by(target):  # an inner loop rebinds it
            return False
    return False


def _bound_by(target: cst.BaseExpression) -> set[str]:
    return {each.value for each in _unpacked(target) if type(each) is cst.Name}
