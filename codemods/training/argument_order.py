"""The order of a scope's events as Python runs them: a call's arguments are evaluated before
the call, so an optimizer built in the argument list of a holder class (``state =
TrainState(torch.optim.AdamW(nnet.parameters()), nnet)``) exists before anything the holder's
``__init__`` (or a method that moves what it holds) does to the model.  The walk records a
call when it enters it, before the calls of its arguments: ``arguments_first`` puts each
call's event after the events of the calls nested in its arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import walk

if TYPE_CHECKING:
    from codemods.training.records import ScopeEvent

# Where each kind of event keeps the call it was recorded at.
_CALL_AT = {"optimizer": 2, "uses": 2, "call": 2, "cpu": 2, "move": 3, "model": 4}


def arguments_first(events: list[ScopeEvent]) -> list[ScopeEvent]:
    """``events`` with each "call" event after the events recorded inside its arguments."""
    ordered = list(events)
    index = 0
    while index < len(ordered):
        event = ordered[index]
        if event[0] != "call":
            index += 1
            continue
        call = event[2]
        inner = {id(node) for arg in call.args for node in walk(arg.value) if type(node) is cst.Call}
        end = index + 1
        while end < len(ordered) and id(_call_of(ordered[end])) in inner:
            end += 1
        if end == index + 1:
            index += 1
        else:  # the nested events first, then the call (they may hold calls of their own: look again)
            ordered[index:end] = [*ordered[index + 1 : end], event]
    return ordered


def _call_of(event: ScopeEvent) -> object:
    at = _CALL_AT.get(event[0])
    return event[at] if at is not None and at < len(event) else None
