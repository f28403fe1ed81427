"""Moves that run only under a condition the port keeps (``if use_cuda: model.cuda()``, the condition
a parameter or a config's flag), after an optimizer built outside it (for early_optimizers.py,
XLA203): a move put before the optimizer would run on every path, the CPU's too, and leave the
model on the XLA device where the original kept it and its inputs on the CPU ("Expected XLA
tensor"); such a move is one that may not go to the XLA device, reported at the optimizer.  A
condition the port makes true (an availability check it drops, a flag it switches on) keeps none."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, fold_true
from codemods.engine.positions import code_of
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.engine.walk import Walk
    from codemods.facts import Facts
    from codemods.training.followed_events import FollowedEvent


class ConditionalMoves(Analysis):
    """The part of TrainingAnalysis that finds the conditions around moves and optimizers."""

    facts: Facts
    device: DeviceAnalysis

    def __init__(self, walk: Walk) -> None:
        super().__init__(walk)
        self.call_conds: dict[cst.Call, tuple[cst.If, ...]] = {}  # the ifs around a call, if any

    def leave_Call(self, node: cst.Call) -> None:
        if self.walk.conds:
            self.call_conds[node] = tuple(c for c in self.walk.conds if type(c) is cst.If)

    def _kept_condition(self, move: cst.Call, optimizers: list[cst.CSTNode]) -> cst.If | None:
        """The innermost ``if`` around ``move`` that the port keeps and that is around no optimizer of
        the scope (a move under it runs only where it holds; one beside the optimizer under the same
        ``if`` is put before it under it too); None if none is."""
        around = [set(self.call_conds.get(o, ())) for o in optimizers if type(o) is cst.Call]
        for cond in reversed(self.call_conds.get(move, ())):
            if any(cond in ifs for ifs in around) or self._true_on_xla(cond):
                continue
            return cond
        return None

    def _true_on_xla(self, cond: cst.If) -> bool:
        if cond in self.facts.device.ifs:
            return True  # an availability check the port drops
        return fold_true(cond.test, lambda n: self.device._switched_flag(dotted(n))) is True

    def conditional_moves(self, events: list[FollowedEvent], nodes: dict[int, cst.Call]) -> list[FollowedEvent]:
        """``events`` with each move under a kept condition (``nodes``: the move's call, by the
        event's index) as a move that may not go to the XLA device, its condition named."""
        optimizers: list[cst.CSTNode] = [e[2] for e in events if e[0] == "optimizer" and isinstance(e[2], cst.CSTNode)]
        if not optimizers:
            return events
        out = list(events)
        for index, move in nodes.items():
            cond = self._kept_condition(move, optimizers)
            event = events[index]
            if cond is not None and event[0] == "move":
                out[index] = ("move", event[1], False, f"{event[3]} (only `if {code_of(cond.test)}`)")
        return out
