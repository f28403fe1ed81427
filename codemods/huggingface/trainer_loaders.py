"""A Trainer subclass's ``get_train_dataloader`` that returns a loader Accelerate never prepared.

transformers' own ``get_train_dataloader`` returns ``self.accelerator.prepare(DataLoader(...))``
(transformers 5.24, trainer.py ``_get_dataloader``); on XLA that prepared loader is accelerate's
``MpDeviceLoaderWrapper`` (data_loader.py), and it is what ends each training step: the Trainer's
loop says so ("PyTorch/XLA relies on the dataloader to insert mark_step each iteration") and
marks the step itself only at logging steps and after the loop; ``_prepare_for_training`` does not
prepare the train loader again, and a prepared optimizer's ``step`` adds no barrier (accelerate 1.15,
optimizer.py).  An override that returns another loader leaves the training steps without a
barrier: the graph grows from one logging step to the next.  (The evaluation loop marks each step
itself, so ``get_eval_dataloader`` and ``get_test_dataloader`` overrides need nothing.)

An override is left alone when it goes through ``prepare`` (or ``prepare_data_loader``), wraps in
torch_xla's device loaders, calls the base's ``get_train_dataloader`` (``super()``), returns an
attribute the class binds to what ``prepare`` returned, or has no return of a value (abstract);
and so is a class that calls torch_xla's step barrier (``xm.mark_step``, ``torch_xla.sync``).  A helper
method the class defines is followed; one it does not define (``self._get_dataloader(...)``, transformers'
own helper, which prepares; a mixin's) is not read, and the override is unknown, not unprepared.  A class
of the file only evaluated or predicted with, that no other file names, is not reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import libcst as cst

from codemods.engine.nodes import dotted, method_name, receiver, walk
from codemods.huggingface.accelerate_loaders import PREPARE_METHODS

if TYPE_CHECKING:
    from codemods.huggingface.facts import HuggingFaceFacts

LOADER_METHOD = "get_train_dataloader"
_XLA_WRAPPERS = frozenset({"MpDeviceLoader", "ParallelLoader", "per_device_loader"})
_XLA_BARRIERS = frozenset({"mark_step", "sync"})
State = Literal["prepared", "base", "unprepared", "unknown"]


def _methods(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    return {s.name.value: s for s in cls.body.body if type(s) is cst.FunctionDef}


def _own_nodes(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    """The nodes of ``fn``'s body, not those of functions, lambdas or classes nested in it."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(c for c in node.children if type(c) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    return found


def _prepares(call: cst.Call, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    name = method_name(call) or dotted(call.func) or ""
    resolved = resolve(call.func) or ""
    return name in PREPARE_METHODS or (
        resolved.startswith("torch_xla.") and resolved.rpartition(".")[2] in _XLA_WRAPPERS
    )


def _names_base(node: cst.CSTNode) -> bool:
    """``super().get_train_dataloader`` (called, or bound and called later),
    ``BaseTrainer.get_train_dataloader(self)``."""
    return (
        type(node) is cst.Attribute
        and node.attr.value == LOADER_METHOD
        and not (dotted(node) or "").startswith("self.")
    )


def _self_helper(value: cst.BaseExpression | None) -> str:
    """``h`` of a call ``self.h(...)``; "" for anything else."""
    func = dotted(value.func) if type(value) is cst.Call else None
    return func[5:] if func is not None and func.startswith("self.") and func.count(".") == 1 else ""


def _prepared_attributes(cls: cst.ClassDef, resolve: Callable[[cst.CSTNode], str | None]) -> set[str]:
    """``self.x`` that a method of the class binds to what ``prepare`` returned."""
    found: set[str] = set()
    for node in walk(cls):
        if type(node) is cst.Assign and type(node.value) is cst.Call and _prepares(node.value, resolve):
            found |= {name for t in node.targets if (name := dotted(t.target)) and name.startswith("self.")}
    return found


def _barriers(cls: cst.ClassDef, resolve: Callable[[cst.CSTNode], str | None]) -> bool:
    """A method of the class ends XLA steps itself (``xm.mark_step()``, ``torch_xla.sync()``)."""
    return any(
        type(node) is cst.Call
        and (resolved := resolve(node.func) or "").startswith("torch_xla")
        and resolved.rpartition(".")[2] in _XLA_BARRIERS
        for node in walk(cls)
    )


def override_state(cls: cst.ClassDef, resolve: Callable[[cst.CSTNode], str | None]) -> State:
    """What the class's ``get_train_dataloader`` returns: a ``prepared`` loader, the ``base``'s,
    an ``unprepared`` one, or ``unknown`` (no override, or no return of a value)."""
    methods = _methods(cls)
    if LOADER_METHOD not in methods:
        return "unknown"
    if _barriers(cls, resolve):
        return "prepared"
    attributes = _prepared_attributes(cls, resolve)
    known: dict[str, State] = {}

    def state(name: str) -> State:
        if name in known:
            return known[name]
        known[name] = "unprepared"  # (a helper that calls itself, meanwhile)
        known[name] = found = _state(name)
        return found

    def _state(name: str) -> State:
        nodes = _own_nodes(methods[name])
        calls = [n for n in nodes if type(n) is cst.Call]
        if any(_prepares(call, resolve) for call in calls):
            return "prepared"
        if any(_names_base(node) for node in nodes):
            return "base"
        for call in calls:  # a helper method of the class that prepares the loader
            helper = _self_helper(call)
            if helper in methods and state(helper) in ("prepared", "base"):
                return "prepared"
        returns = [n.value for n in nodes if type(n) is cst.Return and n.value is not None]
        if any(dotted(value) in attributes for value in returns):
            return "prepared"
        # ``return self._get_dataloader(...)`` (transformers' own helper, which prepares), a mixin's
        # helper: a method the class does not define is not read here, nor one it defines that
        # returns such a call; also through a local name (``loader = self.helper(...); return loader``).
        returned = {value.value for value in returns if type(value) is cst.Name}
        helpers = {_self_helper(value) for value in returns} | {
            _self_helper(node.value)
            for node in nodes
            if type(node) is cst.Assign and any(dotted(t.target) in returned for t in node.targets)
        }
        if any(h and (h not in methods or state(h) == "unknown") for h in helpers):
            return "unknown"
        return "unprepared" if returns or name != LOADER_METHOD else "unknown"

    return state(LOADER_METHOD)


def note_trainer_class(
    cls: cst.ClassDef,
    resolve: Callable[[cst.CSTNode], str | None],
    part: HuggingFaceFacts,
    project_class: Callable[[cst.BaseExpression], bool],
) -> None:
    """Note a Trainer subclass of the file whose training steps get no barrier: its own override
    returns an unprepared loader (the override's name is reported), or it keeps (or calls through
    ``super()``) the loader of a base that does, of the file or of another module (``project_class``)."""
    state = override_state(cls, resolve)
    if state == "unprepared":
        part.unbarriered_loaders[_methods(cls)[LOADER_METHOD].name] = cls.name.value
        part.unbarriered_trainers.add(cls.name.value)
    elif state in ("unknown", "base") and any(unbarriered(b.value, part, project_class) for b in cls.bases):
        part.unbarriered_trainers.add(cls.name.value)


def unbarriered(
    node: cst.BaseExpression, part: HuggingFaceFacts, project_class: Callable[[cst.BaseExpression], bool]
) -> bool:
    """``node`` names a Trainer class whose training loader gets no barrier (of the file, or of
    another module of the project whose summary says so)."""
    return dotted(node) in part.unbarriered_trainers or project_class(node)


def maybe_trained(
    trainer: cst.Call,
    scope: str,
    assigned: dict[tuple[str, str], list[cst.BaseExpression]],
    calls: list[tuple[cst.Call, str]],
    returns: dict[str, list[cst.BaseExpression | None]],
) -> bool:
    """The Trainer built by ``trainer`` (in ``scope``) may train: its ``.train()`` is called, or it is
    bound to a name of ``scope`` that is trained, handed to a call or returned, or it goes anywhere
    else the tool does not follow (an attribute, an argument).  Not: a name only evaluated or
    predicted with."""
    names = {name for (where, name), values in assigned.items() if where == scope and trainer in values}
    if not names:
        return not any(receiver(call) is trainer for call, _ in calls) or any(
            receiver(call) is trainer and method_name(call) == "train" for call, _ in calls
        )
    for call, where in calls:
        if where != scope:
            continue
        if method_name(call) == "train" and dotted(receiver(call)) in names:
            return True
        if any(type(arg.value) is cst.Name and arg.value.value in names for arg in call.args):
            return True
    return any(type(value) is cst.Name and value.value in names for value in returns.get(scope, []))


def drop_evaluated_only(
    part: HuggingFaceFacts, module: cst.Module, mentioned_elsewhere: Callable[[str], bool | None]
) -> None:
    """Forget the override of a Trainer class of this file that only evaluates (or predicts): every
    use of its name here is a call whose trainer is not trained (``maybe_trained``; no subclass, no
    handing of the class itself), and no other file of the project names it."""
    trains = {id(call.func): trained for call, (_, _, trained) in part.unbarriered_calls.items()}
    classes = {id(node.name) for node in walk(module) if type(node) is cst.ClassDef}
    for override, cls in list(part.unbarriered_loaders.items()):
        uses = [node for node in walk(module) if type(node) is cst.Name and node.value == cls]
        uses = [node for node in uses if id(node) not in classes]
        if uses and all(trains.get(id(node)) is False for node in uses) and mentioned_elsewhere(cls) is not True:
            del part.unbarriered_loaders[override]
