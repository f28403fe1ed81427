"""Device values that another module of the project decides: ``args.device`` where a callable
of that module sets it on ``args`` (``parse_gpu(args)``), or where ``args`` is what one returns
(``args = get_args()``, the options parsed there).  A module this run does not read, or one
still to convert that holds the device choice (a ``--device`` flag defaulting to "cuda:0"),
leaves it to a run on the project folder (XLA112); a converted one says where it ends.

A module-level device of another module (``ptu.device``) that stays None unless a function no
code of the project calls sets it (rlkit's ``device = None`` and ``set_gpu_mode``, its only call
commented out) is the CPU: ``.to(None)`` moves nothing, and training stays off the XLA device."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import is_device_name
from codemods.device.where import Binding, Where
from codemods.engine.nodes import dotted
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from collections.abc import Collection


def decided_in_project(
    project: ProjectAnalysis,
    handed: dict[str, list[tuple[cst.Call, str, int]]],
    name: str,
    options: cst.Call | None,
) -> Where | None:
    """Where ``name`` (``args.device``, set by no statement of this file) ends, when another
    module of the project decides it: ``handed``, the calls of project callables that the
    file hands each name to (by position); ``options``, the call whose result ``args`` is.
    A value that a module this run does not convert decides has no node: the caller's read
    of it is where the chain breaks."""
    root, _, attr = name.partition(".")
    if "." in attr or not is_device_name(attr):
        return None
    return _set_by_project(project, handed.get(root, []), name, attr) or _returned_by_project(project, name, options)


def _set_by_project(
    project: ProjectAnalysis, handed: list[tuple[cst.Call, str, int]], name: str, attr: str
) -> Where | None:
    """``args`` goes to a callable of another project module that sets ``args.device``."""
    for call, func, index in handed:
        origin = project.origin(func)
        if origin is None:
            continue
        if origin.summary is None:
            return Where(
                None,
                f"`{name}` may be set by `{func}()` in {project.module_file(func)}, which this run does not read",
                call,
                True,
            )
        found = origin.summary.device_set_on(origin.name, index, attr)
        if found is None:
            continue
        on_xla, why = found
        where = f"`{name}` is set by `{func}()` in {origin.summary.path}"
        if origin.summary.pending:
            return Where(None, f"{where}, which this run does not convert", call, True, origin.summary.path)
        return Where(on_xla, f"{where}: {why}" if why else where, call if on_xla is False else None)
    return None


def _returned_by_project(project: ProjectAnalysis, name: str, options: cst.Call | None) -> Where | None:
    """``args = get_args()`` of another project module: one this run does not read, or one that
    reaches, in a module still to convert, a device choice that converting it ports (the
    ``--device`` default of a module of options that a dict of modules names)."""
    func = dotted(options.func) if options is not None else None
    origin = project.origin(func) if func is not None else None
    if func is None or origin is None:
        return None
    if origin.summary is None:
        unread = f"in {project.module_file(func)}, which this run does not read"
        return Where(None, f"`{name}` comes from `{func}()` {unread}", None, True)
    held = project.held_device(func)
    if held is None:
        return None
    path, _, there, what, _ = held
    why = f"`{name}` comes from `{func}()`, which reaches {path}, which this run does not convert: there `{there}` has {what}"
    return Where(None, why, None, True, path)


def unset_devices(
    bindings: dict[str, list[Binding]], global_sets: dict[str, set[str]], called: Collection[str]
) -> dict[str, tuple[str, ...]]:
    """The module-level names like a device that the module binds only to None, set only by
    top-level functions (``global device``) that the module never calls (``called``): the name
    -> those functions (ModuleSummary.unset_devices)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, setters in global_sets.items():
        at_module = [b for b in bindings.get(name, []) if b.scope == ""]
        if not is_device_name(name) or not at_module or any(not _none(b.value) for b in at_module):
            continue
        if all("." not in s and s not in called for s in setters):
            found[name] = tuple(sorted(setters))
    return found


def _none(value: cst.BaseExpression | None) -> bool:
    return type(value) is cst.Name and value.value == "None"


def unset_in_project(project: ProjectAnalysis, name: str) -> Where | None:
    """``ptu.device``, a module-level device of another project module that stays None: only
    functions that no code of the project calls (no file but that module names them) set it."""
    head, _, attr = name.rpartition(".")
    origin = project.origin(head)
    if origin is None or origin.summary is None or origin.name:
        return None
    setters = dict(origin.summary.unset_devices).get(attr)
    path = origin.summary.path
    if not setters or any(project.part.context.mentioned_outside(path, s) is not False for s in setters):
        return None
    named = " or ".join(f"`{s}()`" for s in setters)
    return Where(
        False,
        f"`None` (the CPU), as {path} leaves `{attr}` unless {named} sets it, which no code of the project "
        "calls (`.to(None)` moves nothing)",
    )
