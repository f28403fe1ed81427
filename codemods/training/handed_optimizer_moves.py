"""Obligation 2 of SPEC section 5 for a class handed both a model and the optimizer its
caller built over that model's parameters, which then moves the model itself (torchdrug's
``Engine(task, ..., optimizer, gpus=[0])`` doing ``task = task.cuda(self.device)``): moving a
module to XLA replaces its Parameter objects, so the optimizer handed in steps stale CPU
copies.  Reported at the move (no safe port: the callable cannot rebuild an optimizer it
did not build, with the caller's class, groups and state), unless the callable repairs the
optimizer after the move (binds it again, adds or sets its parameter groups, hands it to a
call together with the model, ``accelerator.prepare(model, optimizer)``), the file calls it
itself (the caller's optimizer is followed there), or a file of the run hands it an
optimizer (XLA203 at that caller moves the model first; training/held_conditions.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import dotted, in_source_order, walk
from codemods.training.facts import CallerOptimizer, HandedOptimizerMove

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.training.facts import TrainingFacts
    from codemods.training.records import _Function

# What a step loop does with the optimizer it was handed: none of it changes what it holds
# (``load_state_dict`` keeps the optimizer's own Parameter objects, mapping the saved state onto them).
_KEEPS = frozenset({"step", "zero_grad", "state_dict", "load_state_dict"})


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if type(n) is cst.Name}


def _dotted_names(node: cst.CSTNode) -> set[str]:
    """The names and attribute chains ``node`` reads (``self.model``, ``self``, ``model``...)."""
    return {name for n in walk(node) if type(n) in (cst.Name, cst.Attribute) and (name := dotted(n)) is not None}


def _pairs(node: cst.CSTNode) -> list[tuple[cst.BaseExpression, cst.BaseExpression | None]]:
    """What an assignment writes, each with the value it gets where the tuple shows it
    (``self.model, self.optimizer = task, optimizer``)."""
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        targets = [node.target]
    else:
        return []
    value = getattr(node, "value", None)
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = []
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            values: list[cst.BaseExpression | None] = [None] * len(elements)
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements):
                values = [e.value for e in value.elements]
            pairs.extend(zip(elements, values))
        else:
            pairs.append((target, value))
    return pairs


def _written(target: cst.BaseExpression) -> str | None:
    """The name or attribute an assignment target writes into (``optimizer.param_groups[0]["params"]``:
    ``optimizer.param_groups``)."""
    while type(target) is cst.Subscript:
        target = target.value
    return dotted(target) if type(target) in (cst.Name, cst.Attribute) else None


def _repairs(node: cst.CSTNode, optimizer: str, models: set[str], held: set[str]) -> bool:
    """``node`` (after the move) may give the optimizer ``optimizer`` (held as ``held``,
    ``self.optimizer``) the moved parameters, or replaces it."""
    names = {optimizer, *held}
    for target, value in _pairs(node):
        written = _written(target)
        # ``optimizer = ...``, ``self.optimizer = Adam(...)``, ``optimizer.param_groups[0]["params"] = ...``
        if written is not None and (written in names or any(written.startswith(f"{name}.") for name in names)):
            if not (value is not None and dotted(value) in names):  # ``self.optimizer = optimizer`` keeps it
                return True
        # built again from the handed one over the model: ``self.optimizer = type(optimizer)(task.parameters())``
        if (
            isinstance(value, cst.Call)
            and _dotted_names(value) & names
            and any(_dotted_names(a.value) & models for a in value.args)
        ):
            return True
    if type(node) is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and dotted(func.value) in names:
            return func.attr.value not in _KEEPS  # add_param_group, __init__, _switch_parameters, ...
        handed = [a for a in node.args if dotted(a.value) in names]
        # handed with the model (``accelerator.prepare(model, optimizer)``, ``amp.initialize``)
        return bool(handed) and any(_dotted_names(a.value) & models for a in node.args if a not in handed)
    return False


def _held(function: cst.FunctionDef, value: str) -> set[str]:
    """The names the function binds to the parameter ``value`` (``self.optimizer = optimizer``)."""
    return {
        name
        for node in walk(function)
        for target, bound in _pairs(node)
        if bound is not None and dotted(bound) == value and (name := dotted(target)) is not None
    }


def handed_optimizer_moves(
    part: TrainingFacts,
    functions: list[_Function],
    called: Callable[[str], bool],
    goes_to_xla: Callable[[str | None], bool],
) -> None:
    """Record in ``part.handed_optimizer_moves`` each move of a model parameter of a class's
    ``__init__`` also handed an optimizer (a parameter named like one) that it keeps unrepaired."""
    early = {owner for e in part.optimizer_before_move.values() for owner in e.moved_in}
    for function in functions:
        node = function.node
        if node is None or not function.qualname or function.qualname in early:
            continue
        owner, dot, method = function.qualname.rpartition(".")
        if not dot or method != "__init__":
            # A function handed both (``train(model, optimizer, device)``) often moves again what its
            # caller moved before building the optimizer: a class that places the model it is handed
            # (a trainer, an engine) is where callers hand it on the CPU.
            continue
        callable_name = owner  # as callers call it
        if called(callable_name.rsplit(".", 1)[-1]):
            continue  # the file's caller is followed (XLA203 at its optimizer)
        handed = [*function.params, *function.keyword_params]
        optimizers = [p for p in handed if part.is_optimizer(p) and p in _names(node.body)]
        if not optimizers:
            continue
        methods = [f.node for f in functions if dot and f.qualname.rpartition(".")[0] == owner and f.node is not None]
        for model, device, move, where in function.moved_params:
            if model in optimizers or type(move.func) is not cst.Attribute or move.func.attr.value == "cpu":
                continue
            if device is not None and device.strip("'\"") == "cpu":
                continue
            for optimizer in optimizers:
                held = _held(node, optimizer)
                models = {model, *_held(node, model)}
                order = list(in_source_order(node))
                at = next((i for i, n in enumerate(order) if n is move), None)
                if at is None and where == function.qualname:
                    continue
                after = order[at + 1 :] if at is not None else order
                # Another method of the class may rebuild what ``__init__`` kept (``self.optimizer = ...``).
                others = [n for m in methods if m is not node for n in walk(m)]
                if any(_repairs(n, optimizer, models, held) for n in (*after, *others)):
                    continue
                index = function.params.index(optimizer) if optimizer in function.params else -1
                part.handed_optimizer_moves.setdefault(
                    move,
                    HandedOptimizerMove(
                        model,
                        optimizer,
                        function.qualname,
                        goes_to_xla(device),
                        CallerOptimizer(callable_name, index, optimizer),
                    ),
                )
