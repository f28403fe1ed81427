"""Obligation 2 of SPEC section 5 for an optimizer a factory builds over a model and returns
with it (``return tensorizer, model, optimizer``, DPR's components factories, also reached
through a dict of factories: ``return FACTORIES[kind](cfg)``): a caller that unpacks both
(``tok, model, optimizer = init_components(kind, cfg)``) and moves the model afterwards, here
or through a callable that moves what it is handed (``setup(model, optimizer, device)``),
leaves the optimizer over the CPU Parameter objects the move replaced (XLA203, at the move).
The factory may build it through a chain of helpers (``get_optimizer(model)`` grouping the
parameters with ``param_groups(model)`` and building with ``grouped_optimizer(groups, lr)``:
``_follow_optimizer_helpers``), bound through a conditional (``x = build(...) if train else None``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, walk
from codemods.engine.positions import code_of
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import ModuleSummary
from codemods.training.early_optimizers import EarlyOptimizers
from codemods.training.facts import MovedReturnedOptimizer
from codemods.training.parameter_sources import root_in

if TYPE_CHECKING:
    from codemods.training.records import _Function, _Scope

_MAX_FORWARDS = 4  # how many functions that return another's result are followed, at most


class ReturnedOptimizers(EarlyOptimizers):
    """The part of TrainingAnalysis that follows optimizers returned with their model."""

    unpacked_calls: dict[cst.Call, list[str | None]]

    def _follow_optimizer_helpers(self) -> None:
        """Optimizers built through a chain of helpers (``get_optimizer(model, lr)`` doing
        ``groups = param_groups(model, wd)`` then ``return grouped_optimizer(groups, lr)``): a
        function that hands its parameter to a helper reading that argument's parameters, of
        this file or of the project, reads them too; one that returns what a function of this
        file that builds an optimizer returns (also through a name bound to it) builds one."""
        functions = [fn for fn in self.function_records.values() if fn.node is not None]
        handing = [
            (fn, str(event[1]), event[2])
            for fn in functions
            if fn.params or fn.keyword_params
            for event in fn.events
            if event[0] == "call"
            and any(
                (held := dotted(arg.value)) is not None and _parameter_of(fn, held) is not None for arg in event[2].args
            )
        ]
        returned = {fn.qualname: _returned_builders(fn.node, self.call_targets) for fn in functions}  # type: ignore[arg-type]  # fn.node is not None (above)
        for _ in range(len(functions)):  # until nothing changes (each pass adds to some function)
            changed = False
            for fn, callee, call in handing:
                for handed in self._argument_events(callee, call, True):
                    param = _parameter_of(fn, str(handed[1])) if handed[0] == "optimizer" else None
                    if param is not None and param not in fn.parameters_of:
                        fn.parameters_of.add(param)
                        changed = True
            for fn in functions:
                if fn.builds_optimizer:
                    continue
                for callee in returned[fn.qualname]:
                    local = self._local_callable(callee)
                    if local is not None and local is not fn and local.name != "__init__" and local.builds_optimizer:
                        fn.builds_optimizer = changed = True
                        break
            if not changed:
                break

    def _note_returned_optimizers(self) -> None:
        """The functions of this file that return a model still on the CPU and an optimizer
        built over its parameters in one tuple: (function, the model's position, the
        optimizer's), for the files that call them (TrainingFacts.returned_optimizers). A
        function that returns what one of them returns (``return build(cfg)``, or a dict of
        them: ``return FACTORIES[kind](cfg)``) returns the same."""
        functions = [fn for fn in self.function_records.values() if fn.node is not None]
        for fn in functions:
            for built in self._built_and_returned(fn):
                self.part.returned_optimizers.add((fn.qualname, *built))
        for _ in range(2):  # a function returning one that returns one of them
            for fn in functions:
                for returned in _returned_calls(fn.node):  # type: ignore[arg-type]  # fn.node is not None (above)
                    positions = self._returned_by(returned)
                    if positions is not None:
                        self.part.returned_optimizers.add((fn.qualname, *positions))

    def _built_and_returned(self, fn: _Function) -> set[tuple[int, int]]:
        """(model position, optimizer position) of the tuples ``fn`` returns that hold a model
        built here and an optimizer built over it before any move of it."""
        assert fn.node is not None
        tuples = [node.value for node in walk(fn.node) if type(node) is cst.Return and type(node.value) is cst.Tuple]
        if not tuples:
            return set()  # (no tuple returned: its events need not be followed)
        bound = _bound_names(fn.node)
        on_cpu: set[str] = set()
        over: dict[str, str] = {}  # optimizer name -> the model it holds the CPU parameters of
        for event in self._scope_events(fn):
            name = str(event[1])
            if event[0] == "model":
                over.pop(name, None)
                if self._is_constructor(str(event[2])) and event[3] is None:
                    on_cpu.add(name)
                else:
                    on_cpu.discard(name)
            elif event[0] == "move":
                on_cpu.discard(name)
                over = {opt: model for opt, model in over.items() if model != name}
            elif (
                event[0] == "optimizer"
                and (model := root_in(name, on_cpu)) is not None
                and event[2] not in self.part.optimizer_before_move  # (the fix moves the model first)
            ):
                target = bound.get(event[2])
                if target is not None:
                    over[target] = model
        found: set[tuple[int, int]] = set()
        for returned in tuples:
            names = [dotted(element.value) for element in returned.elements]
            for at, optimizer in enumerate(names):
                model = over.get(optimizer or "")
                if model is not None and model in names:
                    found.add((names.index(model), at))
        return found

    def _returned_by(self, call: cst.Call) -> tuple[int, int] | None:
        """What ``call`` returns, if it returns a model and an optimizer over its CPU
        parameters: their positions. ``build(cfg)`` of this file or the project; a dict of
        such functions (``FACTORIES[kind](cfg)``) when every one of them does, at the same places."""
        func = call.func
        if type(func) is cst.Subscript and (table := dotted(func.value)) is not None:
            callees = list(self.facts.project.name_tables.get(table, ()))
        elif (callee := dotted(func)) is not None:
            table = self._handed_table(callee, call)  # ``init_comp(INITIALIZERS, kind, cfg)``
            callees = list(self.facts.project.name_tables.get(table, ())) if table else [callee]
        else:
            return None
        if not callees:
            return None
        found: set[tuple[int, int]] = set()
        for callee in callees:  # (a dict's: any of them it may call)
            found |= self._positions_of(callee)
        return min(found) if found else None

    def _handed_table(self, callee: str, call: cst.Call) -> str | None:
        """The module-level dict of this file that ``call`` hands the local function ``callee``,
        which returns what calling one of its values returns (``return table[kind](args)``)."""
        local = self._local_callable(callee)
        if local is None or local.node is None:
            return None
        for returned in _returned_calls(local.node):
            if type(returned.func) is cst.Subscript and (held := dotted(returned.func.value)) in local.params:
                index = local.params.index(held)
                handed = call.args[index].value if index < len(call.args) and not call.args[index].star else None
                table = dotted(handed) if handed is not None else None
                return table if table in self.facts.project.name_tables else None
        return None

    def _positions_of(self, callee: str) -> set[tuple[int, int]]:
        """The (model, optimizer) positions of what the function ``callee`` (of this file or of
        the project) returns."""
        local = {(m, o) for name, m, o in self.part.returned_optimizers if name == callee}
        if local or callee in {fn.qualname for fn in self.function_records.values()}:
            return local
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        if found is None or found.summary is None:
            return set()
        return self._summary_positions(found.summary, found.name, (), 0)

    def _summary_positions(
        self, summary: ModuleSummary, name: str, arguments: tuple[str, ...], depth: int
    ) -> set[tuple[int, int]]:
        """What the function ``name`` of the module of ``summary`` returns (see
        ``_positions_of``), following what it forwards (ModuleSummary.forwards: a module
        without torch routing to its factories, through a dict of them too); ``arguments``:
        what its caller hands it, as written there (a dict it calls one of)."""
        found = {(m, o) for function, m, o in summary.returned_optimizers if function == name}
        if found or depth > _MAX_FORWARDS:
            return found
        context = self.facts.project.context
        for function, module, callee, index, handed in summary.forwards:
            if function != name:
                continue
            if index >= 0:  # ``return table[kind](args)``: the dict the caller hands in
                table = arguments[index] if index < len(arguments) else ""
                callees = [(summary, value) for value in summary.table_of(table)] if table else []
            elif index == -2:  # ``return FACTORIES[kind](cfg)``: a dict of the module
                callees = [(summary, value) for value in summary.table_of(callee)]
            else:
                callees = [(summary, callee)]
            for holder, written in callees:
                there = module if index == -1 else ""
                if not there and (imported := holder.origin_of(written)) is not None:
                    there, written = imported
                if there:
                    hit = context.lookup_from(holder, there, written)
                    if hit is None or hit.summary is None:
                        continue
                    holder, written = hit.summary, hit.name
                found |= self._summary_positions(holder, written, handed, depth + 1)
        return found

    def _moves_after_returned_optimizers(self, scopes: list[_Scope]) -> None:
        """``tok, model, optimizer = factory(cfg)`` (see the module docstring), then a move
        of ``model`` before the optimizer is built again: reported at the move."""
        unpacked = self.unpacked_calls
        if not unpacked:
            return
        for scope in scopes:
            held: dict[str, tuple[str, cst.Call, str]] = {}  # model -> (optimizer, the factory's call, where)
            reported: dict[str, cst.Call] = {}  # optimizer -> the move reported (dropped if it is built again)
            for event in scope.events:
                kind, name = event[0], str(event[1])
                targets = unpacked.get(event[2]) if kind == "call" else None  # type: ignore[call-overload]  # a call event's call
                positions = self._returned_by(event[2]) if targets is not None else None  # type: ignore[arg-type]  # as above
                if targets is not None and positions is not None and max(positions) < len(targets):
                    model, optimizer = targets[positions[0]], targets[positions[1]]
                    if model and optimizer and _used(scope, optimizer):
                        held[model] = (optimizer, event[2], self._factory_origin(name))  # type: ignore[assignment]  # as above
                    continue
                if kind == "model":  # a name bound anew: the model, or an optimizer built again
                    held = {model: entry for model, entry in held.items() if name not in (model, entry[0])}
                    if (stranding := reported.pop(name, None)) is not None:  # over the moved parameters
                        self.part.moved_returned_optimizers.pop(stranding, None)
                    continue
                if kind == "move" and name in held:
                    move = event[-1]
                    assert isinstance(move, cst.Call)
                    if self._to_the_device(move):  # type: ignore[attr-defined]  # a mixin: TrainingAnalysis (OwnOptimizerMoves) defines it
                        entry = held.pop(name)
                        self._stranded(name, entry, move, self._goes_to_xla(event[2]), "")  # type: ignore[arg-type]  # a move event's device
                        reported[entry[0]] = move
                elif kind == "call" and held:
                    call = event[2]
                    assert isinstance(call, cst.Call)
                    for handed in self._argument_events(name, call, False):
                        if handed[0] == "move" and (model := str(handed[1])) in held:
                            entry = held.pop(model)
                            self._stranded(model, entry, call, bool(handed[2]), str(handed[3]))
                            reported[entry[0]] = call

    def _factory_origin(self, callee: str) -> str:
        """`` (pkg/models.py)`` for a factory of another module; nothing for one of this file."""
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        return f" ({found.summary.path})" if found is not None and found.summary is not None else ""

    def _stranded(self, model: str, entry: tuple[str, cst.Call, str], move: cst.Call, xla: bool, through: str) -> None:
        optimizer, factory, origin = entry
        self.part.moved_returned_optimizers.setdefault(
            move, MovedReturnedOptimizer(model, optimizer, code_of(factory), origin, xla, through)
        )


def _used(scope: _Scope, optimizer: str) -> bool:
    """The optimizer a call returns is used past its unpacking (``_``, or a name read nowhere
    else in the function, is discarded: ``encoder, _ = build(cfg, inference_only=True)``)."""
    node = getattr(scope, "node", None)
    if optimizer == "_" or node is None:
        return optimizer != "_"
    root = optimizer.split(".")[0]
    return sum(1 for sub in walk(node) if type(sub) is cst.Name and sub.value == root) > 1


def _parameter_of(fn: _Function, name: str) -> str | None:
    """The parameter of ``fn`` that ``name`` is, or a submodule of (``model.encoder``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in fn.params or prefix in fn.keyword_params:
            return prefix
        if (bound := fn.bound.get(prefix)) is not None:
            return bound
    return None


def _returned_builders(function: cst.FunctionDef, targets: dict[cst.Call, str]) -> list[str]:
    """The callables whose result ``function`` returns: ``return build(groups, lr)``, or
    ``optimizer = build(groups, lr)`` then ``return optimizer``."""
    calls = [node for node in walk(function) if type(node) is cst.Call]
    found: list[str] = []
    for node in walk(function):
        if type(node) is not cst.Return or node.value is None:
            continue
        value = node.value
        if type(value) is cst.Call:
            found.extend(callee for callee in [dotted(value.func)] if callee is not None)
        elif type(value) is cst.Name:
            found.extend(
                callee
                for call in calls
                if targets.get(call) == value.value and (callee := dotted(call.func)) is not None
            )
    return found


def _bound_names(function: cst.FunctionDef) -> dict[cst.Call, str]:
    """Each call in a value that ``function`` binds to a plain name (``optimizer =
    AdamW(model.parameters())``, also through a conditional: ``optimizer = get_optimizer(model)
    if train else None``): call -> that name."""
    bound: dict[cst.Call, str] = {}
    for node in walk(function):
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            for each in walk(node.value):
                if type(each) is cst.Call:
                    bound[each] = node.targets[0].target.value
    return bound


def _returned_calls(function: cst.FunctionDef) -> list[cst.Call]:
    """The calls ``function`` returns whole (``return build(cfg)``, ``return FACTORIES[kind](cfg)``)."""
    return [node.value for node in walk(function) if type(node) is cst.Return and type(node.value) is cst.Call]
