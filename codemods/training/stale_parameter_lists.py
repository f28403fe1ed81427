"""Obligation 2 of SPEC section 5 for parameter lists a module class collects in ``__init__``
(``self.params1 = list(self.convs.parameters())``, GCNII's parameter groups): the caller moves
the instance (``model = Net().to(device)``), then builds the optimizer over those lists
(``Adam([{"params": model.params1}, ...])``).  On XLA the move replaces the Parameter objects,
the lists keep the CPU ones, and the optimizer steps them: training changes nothing (XLA203, at
the optimizer).  The lists are found in the classes of this file and, through the module
summaries, of the project's other modules; a list the caller collects again after the move
(``model.params1 = list(model.convs.parameters())``) is no finding."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import arg_value, dotted, method_name, names_the_cpu, string_value
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.training.facts import StaleParameterList
from codemods.training.optimizer_lists import is_optimizer_class
from codemods.training.own_optimizer_moves import OwnOptimizerMoves
from codemods.training.parameter_sources import PARAMETER_METHODS, module_calls

# Callables that collect what they are handed as it is.
_COLLECTING = frozenset({"list", "tuple", "itertools.chain", "chain"})

if TYPE_CHECKING:
    from codemods.training.records import _Scope


class StaleParameterLists(OwnOptimizerMoves):
    """The part of TrainingAnalysis that finds optimizers built over parameter lists a module
    class collected in ``__init__``, after the instance moved."""

    classes: set[str]  # the classes defined in this file

    def _note_stale_parameter_lists(self, scopes: list[_Scope]) -> None:
        note_stale_parameter_lists(self, scopes)


def collected_parameter_lists(analysis: StaleParameterLists) -> dict[str, dict[str, tuple[str, str]]]:
    """The module classes of this file whose ``__init__`` binds an attribute of the instance to
    parameters of its own (``self.params1 = list(self.convs.parameters())``, ``self.params =
    [p for p in self.parameters()]``), and does not move the instance itself: class ->
    attribute -> (the assignment as written, the module whose parameters it reads: ``self.convs``)."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for fn in analysis.function_records.values():
        cls = fn.qualname.rpartition(".")[0]
        if fn.name != "__init__" or fn.node is None or cls not in analysis.classes:
            continue
        lists: dict[str, tuple[str, str]] = {}
        for event in fn.events:
            if event[0] == "move" and event[1] == "self":
                lists = {}  # ``self.to(device)`` in ``__init__``: what it collects after is the moved parameters
            if event[0] != "collect" or not event[1].startswith("self.") or "." in event[1][5:]:
                continue
            attribute, value = event[1][5:], event[2]
            if (owner := _own_parameters_of(analysis, value)) is not None:
                lists[attribute] = (f"self.{attribute} = {code_of(value)}", owner)
            else:
                lists.pop(attribute, None)
        if lists:
            found[cls] = lists
    return found


def _own_parameters_of(analysis: StaleParameterLists, value: cst.BaseExpression) -> str | None:
    """The module (``self``, or a submodule of it: ``self.convs``) whose parameters ``value``
    hands out, where it builds no optimizer over them (that is own_optimizer_builds.py's)."""
    if not _a_collection(value) or (
        type(value) is cst.Call and is_optimizer_class(analysis.walk.resolve(value.func) or "")
    ):
        return None
    return next(
        (
            owner
            for call, owner in module_calls(value)
            if method_name(call) in PARAMETER_METHODS and (owner == "self" or owner.startswith("self."))
        ),
        None,
    )


def _a_collection(value: cst.BaseExpression) -> bool:
    """``value`` collects what it reads as it is (``list(...)``, ``tuple(...)``, ``[...]``, a
    comprehension, ``a + b`` of those, ``x.parameters()`` itself), not through a callable that may
    make something else of it (an optimizer built by a factory, an EMA copy)."""
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
        return True
    if type(value) is cst.BinaryOperation:
        return _a_collection(value.left) and _a_collection(value.right)
    if type(value) is not cst.Call:
        return False
    return method_name(value) in PARAMETER_METHODS or dotted(value.func) in _COLLECTING


def note_stale_parameter_lists(analysis: StaleParameterLists, scopes: list[_Scope]) -> None:
    """Optimizers built over ``name.<attribute>`` where ``name`` is an instance (built in the
    scope) of a class that collected that attribute's parameters in ``__init__``, and the
    instance moved to a device in between: the optimizer holds the stale CPU parameters."""
    own = collected_parameter_lists(analysis)
    analysis.part.parameter_lists.update(
        (cls, attribute, written, owner) for cls, lists in own.items() for attribute, (written, owner) in lists.items()
    )
    project = analysis.walk.analysis(ProjectAnalysis)
    for scope in scopes:
        classes: dict[str, tuple[str, dict[str, tuple[str, str]], str]] = {}  # name -> (class, its lists, where it is)
        moved: dict[str, bool] = {}  # names moved to a device -> to the XLA device on every path
        recollected: set[str] = set()  # ``model.params1 = ...`` after the move
        for event in scope.events:
            if event[0] == "model":
                name, constructor, move = event[1], event[2], event[3]
                classes.pop(name, None)
                moved.pop(name, None)
                recollected = {held for held in recollected if not held.startswith(f"{name}.")}
                lists, origin = own.get(constructor), ""
                if lists is None and (found := project.origin(constructor)) is not None and found.summary:
                    lists = {
                        attr: (written, owner)
                        for cls, attr, written, owner in found.summary.parameter_lists
                        if cls == found.name
                    }
                    origin = f" ({found.summary.path})"
                if lists:
                    classes[name] = (constructor, lists, origin)
                    if move is not None and (xla := _device_move(analysis, move)) is not None:
                        moved[name] = xla
            elif event[0] == "move" and event[1] in classes:
                if (xla := _device_move(analysis, event[3])) is not None:
                    moved[event[1]] = xla
            elif event[0] == "collect" and event[1].rpartition(".")[0] in moved:
                recollected.add(event[1])
            elif event[0] == "uses":
                stale = [
                    (holder, attribute)
                    for used in event[1]
                    if (parts := used.rpartition("."))
                    and (holder := parts[0]) in moved
                    and used not in recollected
                    and (attribute := parts[2]) in classes[holder][1]
                ]
                if stale:
                    holder = stale[0][0]
                    constructor, lists, origin = classes[holder]
                    attributes = tuple(dict.fromkeys(attribute for name, attribute in stale if name == holder))
                    analysis.part.stale_parameter_lists.setdefault(
                        event[2],
                        StaleParameterList(
                            holder,
                            constructor,
                            attributes,
                            tuple(lists[attribute][0] for attribute in attributes),
                            tuple(dict.fromkeys(lists[attribute][1] for attribute in attributes)),
                            origin,
                            moved[holder],
                        ),
                    )


def _device_move(analysis: StaleParameterLists, move: cst.Call) -> bool | None:
    """A move to a device (not to the CPU, not a cast): whether it goes to the XLA device on
    every path; None for no such move."""
    target = arg_value(move, 0, "device")
    cuda = method_name(move) == "cuda" or (string_value(target) or "").split(":")[0] == "cuda"
    if not cuda and (analysis._casts_only(target) or names_the_cpu(target)):  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (training/training_walk.py) defines _casts_only
        return None
    return cuda or analysis._goes_to_xla(dotted(target) if target is not None else None)
