"""A scope's events once its calls are followed (early_optimizers.py's ``_scope_events``), as
types, and what they do to a model: its later moves, also through names bound to it
(``self.model = model`` then ``self.model.to(device)``) or by the class's other methods, until
the name is bound to a module built anew.  Kept apart from early_optimizers.py, which builds
the events and judges the optimizers by them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import libcst as cst

from codemods.engine.nodes import dotted, walk

if TYPE_CHECKING:
    from codemods.training.records import CpuEvent, ModelEvent, OptimizerEvent

    # What a scope's events do to models once its calls are followed (``_scope_events``):
    # plain tuples tagged by their kind, like the scope's own events (training/records.py).
    # A move: the name, whether it goes to XLA, where (as a finding names it).
    MovedEvent = tuple[Literal["move"], str, bool, str]
    # A callee moves the name to the CPU, and back to a device itself: the name, the call.
    CpuBackEvent = tuple[Literal["cpu"], str, cst.Call, Literal["back"]]
    # A callee builds an optimizer over the name, or reads its parameters for one (feeding
    # an optimizer): the name, the call, the argument (index, or keyword), whether it only reads them.
    HandedOptimizerEvent = tuple[Literal["optimizer"], str, cst.Call, int | str | None, bool]
    # A name handed to a callable the tool cannot read, or one an optimizer is built from that
    # is not followed: the name, the call, the callable as a finding names it ("": none),
    # whether the name is bound in the scope.
    UntracedEvent = tuple[Literal["untraced"], str, cst.Call, str, bool]
    # A module built over others that it keeps: the name, the names it keeps, its move at
    # creation (goes to XLA, where) or None.
    KeptWrapsEvent = tuple[Literal["wraps"], str, tuple[str, ...], tuple[bool, str] | None]
    # ``name = source``: the name, the name chain bound to it.
    AliasEvent = tuple[Literal["alias"], str, str]
    # What handing arguments to a callee does (``_argument_events``).
    HandedEvent = UntracedEvent | CpuEvent | CpuBackEvent | MovedEvent | HandedOptimizerEvent
    # A scope's events, its calls followed (``_scope_events``).
    FollowedEvent = HandedEvent | OptimizerEvent | KeptWrapsEvent | AliasEvent | ModelEvent


def moved_by_methods(
    qualname: str,
    written: str,
    attribute_moves: dict[tuple[str, str], list[tuple[str, bool, str]]],
    held_as: list[str] | None = None,
) -> list[tuple[bool, str]]:
    """In ``__init__`` (``qualname``), the moves of the attribute ``written`` names
    (``self.model.head``: ``self.model``) by the class's other methods, which run after it; for a
    parameter (``mac.parameters()``), those of the attributes ``held_as`` that hold it (``self.mac = mac``)."""
    if not qualname.endswith(".__init__"):
        return []
    if not written.startswith("self."):
        rest = written.partition(".")[2]
        return [
            move
            for attribute in held_as or ()
            for move in moved_by_methods(qualname, ".".join(p for p in (attribute, rest) if p), attribute_moves)
        ]
    key = (qualname.rpartition(".")[0], ".".join(written.split(".")[:2]))
    # The class's own ``cuda`` method moves only where a caller asks for CUDA (``if args.use_cuda:
    # learner.cuda()``): a move put before the optimizer would run on every path, the CPU's too.
    return [
        (False, f"{where}, a method that runs only where a caller calls it,")
        if method.endswith(".cuda")
        else (xla, where)
        for method, xla, where in attribute_moves.get(key, ())
        if method != qualname
    ]


def canonical(name: str, aliases: dict[str, str]) -> str:
    """``name`` with a prefix bound to another name replaced by it: ``self.model.head``
    after ``self.model = model`` is ``model.head``."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        if (bound := aliases.get(".".join(parts[:cut]))) is not None:
            return ".".join([bound, *parts[cut:]])
    return name


def moves_of(model: str, after: list[FollowedEvent], aliases: dict[str, str]) -> list[tuple[bool, str]]:
    """The moves of ``model`` among the events ``after`` (whether to XLA, where), also
    through names bound to it later (``self.model = model`` then ``self.model.to(device)``)."""
    bound = dict(aliases)
    moves: list[tuple[bool, str]] = []
    for event in after:
        if binds_anew(model, event):
            break  # what is moved from here on is another module
        if event[0] == "alias":
            bound[str(event[1])] = canonical(str(event[2]), bound)
        elif event[0] == "model":
            bound.pop(str(event[1]), None)
        elif event[0] == "move" and canonical(str(event[1]), bound) == model:
            moves.append((event[2], event[3]))
        elif event[0] == "wraps" and any(canonical(str(w), bound) == model for w in event[2]):
            bound[str(event[1])] = model  # a module built over the model: moving it moves the model
            if event[3] is not None:
                moves.append(event[3])
    return moves


def binds_anew(model: str, event: FollowedEvent) -> bool:
    """``event`` binds the name ``model`` anew to a call it is not handed (``model = Net()``,
    not ``model = DDP(model)``): the module built before is no longer the one the name moves."""
    return (
        event[0] == "model"
        and event[1] == model
        and not any(
            (held := dotted(sub)) == model or (held or "").startswith(f"{model}.")
            for sub in walk(event[4])
            if type(sub) in (cst.Name, cst.Attribute)
        )
    )
