"""What the analysis of optimizers a module class builds over its own parameters (XLA203,
training/own_optimizer_moves.py) reads of a class's ``__init__``, of its methods and of a
scope's events: whether ``__init__`` runs its base's, which method builds an optimizer, which
optimizers are built again after the move."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, walk
from codemods.training.facts import MovedOwnOptimizer
from codemods.training.parameter_sources import root_in

if TYPE_CHECKING:
    from codemods.training.records import _Function, _Scope


def runs_super_init(init: _Function | None, base: str) -> bool:
    """The ``__init__`` ``init`` calls its base's (``super().__init__(...)``, ``Base.__init__(self,
    ...)``) and moves neither the instance nor a submodule."""
    if init is None or init.node is None or any(event[0] == "move" for event in init.events):
        return False
    return any(
        type(sub) is cst.Call
        and type(sub.func) is cst.Attribute
        and sub.func.attr.value == "__init__"
        and (
            (type(sub.func.value) is cst.Call and dotted(sub.func.value.func) == "super")
            or dotted(sub.func.value) == base
        )
        for sub in walk(init.node)
    )


def note_child(
    children: dict[str, dict[tuple[str, int], None] | None], owner: str, child: tuple[str, int] | None
) -> None:
    """Another optimizer of ``owner`` holds the modules of that ``__init__`` parameter (None:
    modules of its own, which no caller can have moved first)."""
    if child is None:
        children[owner] = None
    elif (held_in := children.setdefault(owner, {})) is not None:
        held_in[child] = None


def built_by_a_method(target: str, called: object, moved: set[str]) -> tuple[str, str] | None:
    """The attribute of ``self`` that ``target = called()`` binds to what a method of the
    instance or of a child it holds returns (``self.optimizer = self.net.get_optimizer()``),
    and that method; None when that child was moved first."""
    if not isinstance(called, str) or not target.startswith("self.") or "." in target.removeprefix("self."):
        return None
    holder, _, method = called.rpartition(".")
    if root_in(holder, {"self"}) is None or holder in moved:
        return None
    return target.removeprefix("self."), method


def reads_own_parameters(function: cst.FunctionDef) -> bool:
    """``function`` calls ``self.parameters()`` or ``self.named_parameters()``."""
    return any(
        type(sub) is cst.Call
        and type(sub.func) is cst.Attribute
        and sub.func.attr.value in ("parameters", "named_parameters")
        and dotted(sub.func.value) == "self"
        for sub in walk(function)
    )


def with_method_calls(scope: _Scope) -> list[tuple[object, ...]]:
    """The events of ``scope`` with its method calls on names (``model.compile(lr)``) among
    them, in the order of the code: ("method_call", method, the name, call)."""
    calls = list(scope.method_calls)
    merged: list[tuple[object, ...]] = []
    for index, event in enumerate(scope.events):
        while calls and calls[0][0] <= index:
            merged.append(("method_call", calls[0][2], calls[0][1], calls[0][3]))
            calls.pop(0)
        merged.append(event)
    merged.extend(("method_call", method, holder, call) for _, holder, method, call in calls)
    return merged


def rebuilt_after_move(
    target: str, reported: dict[str, list[cst.Call]], moves: dict[cst.Call, MovedOwnOptimizer]
) -> None:
    """``agent.opt = Adam(agent.parameters())`` (``target``) after the move of ``agent`` that
    was reported: the optimizer is built again over the moved parameters, no finding."""
    holder, _, attribute = target.partition(".")
    for cut in range(target.count("."), 0, -1):
        holder, attribute = ".".join(target.split(".")[:cut]), ".".join(target.split(".")[cut:])
        for move in reported.get(holder, ()):
            if (stranded := moves.get(move)) is not None and stranded.attribute == attribute:
                del moves[move]


def joined_built_by(built_by: list[str]) -> str:
    """`` (by `self.compile(lr)` in `BaseModel.compile`)``, or nothing."""
    return f" (by {', '.join(dict.fromkeys(built_by))})" if built_by else ""


# Methods of ``self`` that are torch.nn.Module's (their moves are events of their own).
NOT_FOLLOWED = frozenset({"to", "cuda", "cpu", "parameters", "named_parameters", "apply", "register_buffer"})
