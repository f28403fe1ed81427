"""Obligation (3) where a loop's batches come from a package the tool does not follow (for
device/obligations.py): ``for x, y in somelib.iterate(data)``, or ``for batch in loader`` with
``loader`` bound once to ``somelib.make_loader(cfg)`` (through ``tqdm``/``enumerate`` too).  On
CUDA such a library may have yielded tensors on the GPU (or the original would not have run); on
an XLA host nothing says where they are, so a forward that takes them unmoved is not proven."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device import batch_shapes
from codemods.device.obligation_records import ITERATION_WRAPPERS, Loop, calls_in, code
from codemods.engine.nodes import dotted
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.device.values import DeviceValueAnalysis
    from codemods.engine.walk import Walk

# Keywords that hand a library the device its batches go to (``make_loader(..., device=device)``).
_DEVICE_KEYWORDS = frozenset({"device", "devices"})
_QUOTED = 60  # the longest call a finding quotes whole
# Progress bars of unfollowed packages that yield the items of their first argument as they are
# (like ``tqdm``): the batches come from that argument.
_PROGRESS_WRAPPERS = frozenset(
    {
        "mmengine.track_iter_progress",
        "mmengine.utils.track_iter_progress",
        "mmcv.track_iter_progress",
        "mmcv.utils.track_iter_progress",
        "alive_progress.alive_it",
        "progressbar.progressbar",
    }
)


def unfollowed_source(
    walk: Walk, values: DeviceValueAnalysis, loop: Loop, unmoved: Collection[str] = ()
) -> tuple[str, str] | None:
    """The call of an unfollowed package that ``loop``'s batches come from (as a finding quotes
    it: ``make_loader(...)`` where it is long), and that package; None where they come from
    elsewhere (torch, a followed package, the project), where the call is handed a device (the
    library may move its batches there), or where a call in the loop hands one of the ``unmoved``
    batches a device (``batch = send_to_device(batch, device)``, a helper the tool does not read)."""
    call = _source_call(walk, values, loop)
    if call is None or (func := dotted(call.func)) is None:
        return None
    if unmoved and any(_handed_a_device(values, sub, loop.scope, unmoved) for sub in calls_in(loop.node.body)):
        return None
    if walk.analysis(ProjectAnalysis).origin(func) is not None:
        return None  # a module of the project: the existing XLA116/XLA112 logic follows it
    package = walk.analysis(ProjectAnalysis).library_package(walk.resolve(call.func))
    if package is None or batch_shapes.prefetches(call, walk.resolve):
        return None  # (a prefetching loader copies its batches to its device, the XLA device once ported)
    if _handed_a_device(values, call, loop.scope):
        return None
    text = code(call)
    return (text if len(text) <= _QUOTED and "\n" not in text else f"{code(call.func)}(...)"), package


def _handed_a_device(values: DeviceValueAnalysis, call: cst.Call, scope: str, names: Collection[str] = ()) -> bool:
    """``call`` takes a device (``device=``, or the XLA device by position) and, where ``names``
    are given, one of them."""
    given = {dotted(arg.value) for arg in call.args}
    if names and not any(name in given for name in names):
        return False
    return any(
        (arg.keyword is not None and arg.keyword.value in _DEVICE_KEYWORDS) or values.where(arg.value, scope).on_xla
        for arg in call.args
    )


def _source_call(walk: Walk, values: DeviceValueAnalysis, loop: Loop) -> cst.Call | None:
    """The call ``loop`` iterates: written in the ``for`` or bound once to the name it iterates
    (also as one of the names a call's tuple is unpacked into), wrappers taken off."""
    source = _unwrapped(walk, loop.node.iter)
    if type(source) is cst.Call:
        return source
    name = dotted(source)
    if name is None or name in values.params.get(loop.scope, ()):
        return None  # (a parameter: decided where it is handed)
    for scope in dict.fromkeys(("" if "." in name else loop.scope, "")):
        bound = [b for b in values.bindings.get(name, ()) if b.scope == scope]
        if not bound:
            continue
        if len(bound) != 1:
            return None
        if bound[0].value is not None:
            value = _unwrapped(walk, bound[0].value)
            return value if type(value) is cst.Call else None
        unpacked = values.unpacked.get((scope, name), [])
        return unpacked[0][0] if len(unpacked) == 1 else None
    return None


def _unwrapped(walk: Walk, node: cst.BaseExpression) -> cst.BaseExpression:
    while (
        type(node) is cst.Call
        and node.args
        and (dotted(node.func) in ITERATION_WRAPPERS or walk.resolve(node.func) in _PROGRESS_WRAPPERS)
    ):
        node = node.args[0].value
    return node
