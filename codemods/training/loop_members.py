"""Optimizers built over a loop variable that walks a model's submodules (obligation 2 of SPEC
section 5): in

    for ind, (unet, unet_lr) in enumerate(zip(self.imagen.unets, lr)):
        optimizer = Adam(unet.parameters(), lr=unet_lr)

``unet`` is each member of ``self.imagen.unets``, so the optimizer is over parameters of
``self.imagen`` (as ``self.imagen.unets[0].parameters()`` would be), and a later
``self.imagen.to(device)`` replaces them on XLA.  The member is read through ``enumerate``,
``zip`` (by position) and a dict's ``.values()`` / ``.items()``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted

if TYPE_CHECKING:
    from collections.abc import Sequence


def member_container(loops: Sequence[cst.CSTNode | None], name: str) -> str | None:
    """The attribute (``self.imagen.unets``) whose members the innermost ``for`` of the current
    function that binds ``name`` walks; None where no loop binds it or what it walks is not an
    attribute of a name (``loops``: the walk's, innermost last; None at a function boundary)."""
    for loop in reversed(loops):
        if loop is None:
            return None
        if type(loop) is not cst.For:
            continue
        found = _element_of(loop.target, loop.iter, name)
        if found is not None:
            return found or None
    return None


def _element_of(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> str | None:
    """Where ``name`` is bound by ``target`` iterating ``iterable``: the container it is a member
    of ("" where the target binds it otherwise), None where the target does not bind it."""
    if type(iterable) is cst.Call:
        callee = dotted(iterable.func)
        parts = _parts(target)
        positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if callee == "enumerate" and positional:
            if parts is not None and len(parts) == 2:
                return _element_of(parts[1], positional[0], name)
            return "" if _binds(target, name) else None
        if callee == "zip":
            if parts is not None and len(parts) == len(positional) == len(iterable.args):
                for part, each in zip(parts, positional, strict=True):
                    if (found := _element_of(part, each, name)) is not None:
                        return found
                return None
            return "" if _binds(target, name) else None
        func = iterable.func
        if type(func) is cst.Attribute and not iterable.args and func.attr.value in ("values", "items"):
            if func.attr.value == "values":
                return _element_of(target, func.value, name)
            if parts is not None and len(parts) == 2:
                return "" if _binds(parts[0], name) else _element_of(parts[1], func.value, name)
        return "" if _binds(target, name) else None
    if type(target) is cst.Name:
        if target.value != name:
            return None
        container = dotted(iterable)
        return container if container is not None and "." in container else ""
    return "" if _binds(target, name) else None


def _parts(target: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [e.value for e in target.elements]
    return None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if type(target) is cst.Name:
        return target.value == name
    parts = _parts(target)
    return parts is not None and any(_binds(part, name) for part in parts)
