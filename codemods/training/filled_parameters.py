"""Parameter lists filled in a loop over a model's parameters (faster-rcnn's
``for key, value in dict(model.named_parameters()).items(): params += [{'params': [value], ...}]``):
the loop says the name holds that model's parameters, as ``params = list(model.parameters())``
says it, so an optimizer built from the name is built over the model (whatever built the model: a
project constructor the tool does not know as a module class, ``model = vgg16(classes)``, is a
module when a later ``.cuda()`` or ``.to(device)`` moves it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, in_source_order, walk
from codemods.training.parameter_sources import PARAMETER_METHODS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from codemods.training.records import _Scope


def names_bound(scope: _Scope) -> set[str]:
    """The names a model may be bound to in ``scope``: assigned there, or its function's parameters
    (not a loop's variable: ``for m in models``)."""
    return (
        {str(event[1]) for event in scope.events if event[0] in ("collect", "model")}
        | set(getattr(scope, "params", ()))
        | set(getattr(scope, "keyword_params", ()))
    )


def filling_loops(root: cst.CSTNode | None, name: str, built: cst.Call, known: set[str]) -> list[tuple[str, cst.Call]]:
    """The loops in ``root`` before the optimizer ``built`` (in source order, since the name was last
    bound empty) whose iterable calls ``model.parameters()`` or ``model.named_parameters()`` while their
    body adds to ``name`` (``name += ...``, ``name.append(...)``, ``name.extend(...)``): (the model as
    written, that call), one per model, of those bound in ``known`` (or the instance's: ``self.net``)."""
    if root is None:
        return []
    found: dict[str, cst.Call] = {}
    for node in in_source_order(root, enter_scopes=False):
        if node is built:
            return list(found.items())
        if type(node) is cst.Assign and any(dotted(target.target) == name for target in node.targets):
            found.clear()  # ``params = []``: what is added from here on
        elif type(node) is cst.For and _adds_to(node.body, name):
            for sub in walk(node.iter):
                if (
                    type(sub) is cst.Call
                    and type(func := sub.func) is cst.Attribute
                    and func.attr.value in PARAMETER_METHODS
                    and (model := dotted(func.value)) is not None
                    and (model.startswith("self.") or model.split(".", 1)[0] in known)
                ):
                    found[model] = sub
    return []


def _adds_to(body: cst.CSTNode, name: str) -> bool:
    for node in walk(body):
        if type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign and dotted(node.target) == name:
            return True
        if (
            type(node) is cst.Call
            and type(func := node.func) is cst.Attribute
            and func.attr.value in ("append", "extend")
            and dotted(func.value) == name
        ):
            return True
    return False


def moved_after(
    root: cst.CSTNode | None,
    read: cst.Call,
    model: str,
    events: Sequence[tuple[object, ...]],
    moves: dict[int, cst.Call],
) -> int:
    """Where the optimizer over ``model`` goes among ``events`` (all before the optimizer): before
    the first move of ``model`` (``moves``: move calls by their index) that comes after the loop's
    ``read`` of its parameters; at the end when none does (``params = []``, a loop over
    ``model.named_parameters()``, ``model.cuda()``, then ``SGD(params)``: on XLA the move replaced
    the Parameters the list holds)."""
    if root is None:
        return len(events)
    order = {id(node): index for index, node in enumerate(in_source_order(root, enter_scopes=False))}
    start = order.get(id(read))
    for index in sorted(moves):
        event = events[index]
        if (
            start is not None
            and event[0] == "move"
            and str(event[1]) == model
            and order.get(id(moves[index]), -1) > start
        ):
            return index
    return len(events)
