"""Methods that a class of the file gets at run time (obligation 4 of SPEC section 5):
``setattr(Box, "post_forward_process", default_post_forward)``, where the function bound is a
step function of this file or of another project module (also through a name bound to it in
some branch: ``fn = default_post_forward`` then, under a config switch, ``fn =
get_registered(key)``).  Calling ``box.post_forward_process(loss)`` may run that step, so
``Box.post_forward_process`` is a step callable of the module: a loop of another file that calls
it by its name (``ProjectAnalysis.named_origins``) drives the step and gets the barrier, as it
would for a method the class defines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.nodes import dotted, string_value

if TYPE_CHECKING:
    from codemods.training.drivers import StepDrivers
    from codemods.training.records import _Function

__all__ = ["bound_steps"]


def bound_steps(drivers: StepDrivers, steps: set[str], by_name: dict[str, list[_Function]]) -> set[str]:
    """``Cls.name`` for each ``setattr(Cls, "name", value)`` of the file (``Cls`` a class of the file,
    or ``self.__class__``/``type(self)`` in one of its methods) whose ``value`` names a function
    that runs a training step each call (``steps``: those of this file)."""
    found: set[str] = set()
    for scope in [drivers.module_scope, *drivers.function_records.values()]:
        for event in scope.events:
            if event[0] != "call" or event[1] != "setattr":
                continue
            call = event[2]
            args = call.args
            if len(args) != 3 or any(a.star or a.keyword is not None for a in args):
                continue
            owner = _class_of(dotted(args[0].value), scope.qualname, drivers.classes)
            name = string_value(args[1].value)
            value = dotted(args[2].value)
            if owner is None or name is None or not name.isidentifier() or value is None:
                continue
            local = drivers.local_targets(value, by_name) if "." not in value else []
            if any(fn.qualname in steps for fn in local) or any(
                f.summary is not None and f.summary.runs_step(f.name) for f in drivers.step_origins(value)
            ):
                found.add(f"{owner}.{name}")
    return found


def _class_of(target: str | None, scope: str, classes: set[str]) -> str | None:
    """The class of the file that ``target`` names: itself, or, in a method of that class,
    ``self.__class__`` (``type(self)`` is a call, no name chain)."""
    if target in classes:
        return target
    owner = scope.rpartition(".")[0]
    if target in ("self.__class__", "cls") and owner in classes:
        return owner
    return None
