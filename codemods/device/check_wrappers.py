"""The device choices asked through a function that returns a CUDA availability check (a
*wrapper*: ``def use_gpu(g): return torch.cuda.is_available() and torch.cuda.device_count() > 0``),
of the file or of another module of the project (its summary's ``check_wrappers``): on an XLA host
the wrapper returns False, so the path without CUDA runs (XLA104 reports the condition)."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device import shapes
from codemods.engine.nodes import dotted
from codemods.engine.nodes import walk as walk_nodes
from codemods.project.module_summary import Found

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.engine.walk import Walk

Choices = list[tuple[cst.If | cst.IfExp, cst.Call]]


def saw_condition(
    walk: Walk, node: cst.If | cst.IfExp, project_names: Container[str], local: Choices, project: Choices
) -> None:
    """Note the calls of a condition that may run a function of the file (``cuda_ok()``: in
    ``local``) or of another module of the project (``util.use_gpu(...)``: in ``project``)."""
    for sub in walk_nodes(node.test):
        if type(sub) is not cst.Call or type(sub.func) not in (cst.Name, cst.Attribute):
            continue
        if walk.resolve(sub.func) is None:
            local.append((node, sub))
        elif (func := dotted(sub.func)) is not None and func.split(".")[0] in project_names:
            project.append((node, sub))


def wrapped(
    part: DeviceFacts,
    choices: Iterable[tuple[cst.If | cst.IfExp, cst.Call]],
    origin: Callable[[str], Found | None],
    *,
    local: bool,
) -> None:
    """Add to ``part.wrapped_checks`` each device choice whose condition calls a wrapper: with
    ``local``, one of this file (``part.check_wrappers``); else one of a project module."""
    for condition, call in choices:
        if condition in part.wrapped_checks:
            continue
        if local:
            if (wrapper := shapes.wrapper_of(call, part.check_wrappers)) is not None:
                part.wrapped_checks[condition] = (call, wrapper, part.check_wrappers[wrapper], "")
            continue
        found = origin(dotted(call.func) or "")
        summary = found.summary if found is not None else None
        returned = summary.check_wrapper(found.name) if found is not None and summary is not None else None
        if found is not None and summary is not None and returned is not None:
            part.wrapped_checks[condition] = (call, found.name, returned, summary.path)
