"""Obligation 2 of SPEC section 5 under Accelerate: ``accelerator.prepare`` moves a model to the
XLA device (new Parameter objects) and re-points only the optimizers prepared in the same call
at the moved parameters (accelerate 1.15 ``Accelerator.prepare``: the old-to-new parameter map
is built from that call's own arguments, then ``_switch_parameters`` of each optimizer among its
results).  An optimizer built over the model's parameters that is prepared in another call
(alone, before or after), or held by an object that is not an optimizer (an ``nn.Module`` whose
``__init__`` prepares the optimizer it is handed on its own, audiolm-pytorch's
``OptimizerWithWarmupSchedule``), keeps the CPU copies: reported at the call that prepares the
model (XLA203), which the hook keeps to a receiver the fact sheet knows as an accelerator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

import libcst as cst

from codemods import apis
from codemods.engine.nodes import dotted, in_source_order, walk
from codemods.training.facts import SplitPrepare
from codemods.training.parameter_sources import PARAMETER_METHODS, module_calls

if TYPE_CHECKING:
    from collections.abc import Callable

    from codemods.training.facts import TrainingFacts
    from codemods.training.records import _Function


@dataclass
class _Built:
    models: set[str]  # what its parameters come from, canonical
    line: str  # the optimizer's construction as written
    holder: str | None = None  # the class of the object it is held by (a wrapper prepared alone), or None


def _is_prepare(node: cst.CSTNode | None) -> TypeGuard[cst.Call]:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "prepare"


def _canonical(name: str, aliases: dict[str, str]) -> str:
    """What ``name`` is bound to, also for a submodule of an alias (``self.net.head``).  Each
    step replaces a prefix by what it was bound to; a chain longer than the aliases themselves
    goes round a cycle that grows the name (``a -> b.x``, ``b -> a.y``), so it stops there."""
    for _ in range(len(aliases) + 1):
        parts = name.split(".")
        root = next(
            (".".join(parts[:cut]) for cut in range(len(parts), 0, -1) if ".".join(parts[:cut]) in aliases), None
        )
        if root is None:
            break
        name = aliases[root] + name[len(root) :]
    return name


def _own(source: str, name: str) -> bool:
    """Whether ``source`` is ``name``'s own old value or part of it (``model = model.module``):
    no alias then, which would expand without end."""
    return source == name or source.startswith(f"{name}.")


def _hits(models: set[str], args: set[str]) -> set[str]:
    """The prepared arguments that are one of ``models`` or hold it (``net`` for ``net.head``)."""
    return {a for a in args for m in models if m == a or m.startswith(f"{a}.")}


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    if type(node) is cst.Assign:
        return [t.target for t in node.targets]
    if type(node) is cst.AnnAssign:
        return [node.target]
    return []


def _elements(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [e.value for e in target.elements]
    return [target]


def alone_preparers(functions: list[_Function], module: cst.Module) -> set[str]:
    """Classes of the file, not optimizers, whose ``__init__`` prepares what it is handed as
    an optimizer without any model (``accelerator.prepare(self.optimizer, self.scheduler)``)."""
    classes = {
        c.name.value: c
        for c in module.body
        if type(c) is cst.ClassDef
        and not any("optim" in (dotted(b.value) or "").rsplit(".", 1)[-1].lower() for b in c.bases)
    }
    found: set[str] = set()
    for function in functions:
        owner, _, method = function.qualname.rpartition(".")
        if method != "__init__" or owner not in classes or function.node is None:
            continue
        for node in in_source_order(function.node.body, enter_scopes=False):
            if not _is_prepare(node):
                continue
            names = [(dotted(a.value) or "").rsplit(".", 1)[-1].lower() for a in node.args]
            if names and all("optim" in n or "sched" in n for n in names) and any("optim" in n for n in names):
                found.add(owner)
    return found


def _optimizer_over(
    value: cst.BaseExpression, resolve: Callable[[str], str | None], wrappers: set[str], moved: set[cst.Call]
) -> tuple[cst.Call, set[str]] | None:
    """An optimizer's construction in ``value`` (a torch.optim class, a library's, or a callable
    named like a builder, ``get_optimizer``) and the modules whose parameters it is handed
    while they are still on the CPU (not ``moved``: read after the module was moved or built
    on a device, early_optimizers.py; then the optimizer holds the moved parameters already)."""
    for sub in walk(value):
        if type(sub) is not cst.Call or (callee := dotted(sub.func)) is None or callee in wrappers:
            continue
        if not (apis.is_optimizer_class(resolve(callee) or callee) or "optim" in callee.rsplit(".", 1)[-1].lower()):
            continue
        models = {
            owner
            for arg in sub.args
            for call, owner in module_calls(arg.value)
            if type(call.func) is cst.Attribute and call.func.attr.value in PARAMETER_METHODS and call not in moved
        }
        models |= {
            owner
            for arg in sub.args
            for call, owner in module_calls(arg.value)
            if type(call.func) is cst.Attribute and call.func.attr.value.endswith("parameters") and call not in moved
        }
        if models:
            return sub, models
    return None


def split_prepares(
    part: TrainingFacts,
    functions: list[_Function],
    module: cst.Module | None,
    resolve: Callable[[str], str | None],
) -> None:
    """Record in ``part.split_prepares`` each ``prepare`` call handed a model whose optimizer,
    built over its parameters earlier in the same function (or at the top level), it is not handed."""
    if module is None:
        return
    wrappers = alone_preparers(functions, module)
    bodies: list[cst.CSTNode] = [f.node.body for f in functions if f.node is not None]
    for body in (module, *bodies):
        _scan(part, body, wrappers, resolve)


def _scan(part: TrainingFacts, body: cst.CSTNode, wrappers: set[str], resolve: Callable[[str], str | None]) -> None:
    aliases: dict[str, str] = {}
    built: dict[str, _Built] = {}
    # The findings of this body, dropped for an optimizer built again later (it is not the one stepped).
    pending: dict[cst.Call, SplitPrepare] = {}
    for node in in_source_order(body, enter_scopes=False):
        if _is_prepare(node):
            _prepare(pending, node, built, aliases)
            continue
        targets = _targets(node)
        value = getattr(node, "value", None)
        if not targets or value is None:
            continue
        elements = [e for t in targets for e in _elements(t)]
        if _is_prepare(value):
            # ``opt = acc.prepare(opt)``, ``model, opt = acc.prepare(model, opt)``: each result is its argument.
            args = [dotted(a.value) for a in value.args]
            for at, element in enumerate(elements):
                name = dotted(element)
                source = args[at] if at < len(args) and len(elements) == len(args) else None
                if name is None:
                    continue
                if source is not None and (was := built.get(source)) is not None:
                    built[name] = was
                elif source is not None and not _own(canonical := _canonical(source, aliases), name):
                    aliases[name] = canonical
            continue
        for element in elements:
            if (name := dotted(element)) is None:
                continue
            # ``model = model.module``: the source is read before the name is rebound.
            source_before = _canonical(source, aliases) if (source := dotted(value)) is not None else None
            aliases.pop(name, None)
            built.pop(name, None)
            for prepared, split in list(pending.items()):
                if any(stale[0] == name for stale in split.stale):
                    kept = tuple(stale for stale in split.stale if stale[0] != name)
                    if kept:
                        pending[prepared] = SplitPrepare(split.receiver, split.models, kept)
                    else:
                        del pending[prepared]
            if len(elements) != 1:
                continue
            if source_before is not None:
                if not _own(source_before, name):
                    aliases[name] = source_before
                continue
            found = _optimizer_over(value, resolve, wrappers, part.parameters_after_moves)
            if found is None:
                continue
            call, models = found
            callee = dotted(value.func) if type(value) is cst.Call else None
            holder = callee if callee in wrappers else None
            if call is value or holder is not None or part.is_optimizer(name):
                built[name] = _Built({_canonical(m, aliases) for m in models}, _code(call), holder)
    part.split_prepares.update(pending)


def _code(call: cst.Call) -> str:
    from codemods.engine.positions import code_of

    text = code_of(call)
    return text if len(text) <= 60 else text[:57] + "..."


def _prepare(
    pending: dict[cst.Call, SplitPrepare], call: cst.Call, built: dict[str, _Built], aliases: dict[str, str]
) -> None:
    if any(a.keyword is not None and a.keyword.value == "device_placement" for a in call.args):
        return  # the caller chose the placement (False: nothing moves)
    receiver = dotted(call.func.value) if type(call.func) is cst.Attribute else None
    named = [name for a in call.args if (name := dotted(a.value)) is not None]
    written = {_canonical(name, aliases): name for name in named}
    args = set(written)
    stale = tuple(
        (name, was.line, was.holder)
        for name, was in built.items()
        if _hits(was.models, args) and (name not in named or was.holder is not None)
    )
    if receiver is not None and stale:
        models = tuple(sorted({written[a] for name, *_ in stale for a in _hits(built[name].models, args)}))
        pending.setdefault(call, SplitPrepare(receiver, models, stale))
    for name in [name for name, was in built.items() if _hits(was.models, args)]:
        del built[name]  # moved: an optimizer built from here on holds the moved parameters
