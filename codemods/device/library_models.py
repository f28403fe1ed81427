"""Whether a model is built by a package the tool does not follow, which decides where it goes: the
one question that a script picking no device asks of the call building its model (XLA005,
training/device_less.py) and that the device obligations ask of a stepped model nothing moves
(XLA121, device/obligations.py).  Each says what counts as handing the call a device: XLA005 any
argument that names a placement (the file names no device), XLA121 a value the port makes the
XLA device."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.shapes import is_device_name
from codemods.engine.nodes import dotted, string_value

if TYPE_CHECKING:
    from codemods.project.analysis import ProjectAnalysis

# Keywords that tell a library where to put what it builds, beside any ``*device*`` one.
_PLACING_KEYWORDS = frozenset(
    {"map_location", "gpu", "gpus", "gpu_id", "gpu_ids", "use_gpu", "use_cuda", "cuda", "accelerator"}
)
_DEVICE_KINDS = frozenset({"cuda", "cpu", "xla", "mps", "gpu", "tpu"})


def library_builder(
    project: ProjectAnalysis, callee: str, qualified: str | None, call: cst.Call, handed: Callable[[cst.Arg], bool]
) -> str | None:
    """The package the tool does not follow (``ProjectAnalysis.library_package`` of ``qualified``)
    whose ``call`` (of ``callee``, as written) builds a model without being told where to put it
    (``timm.create_model("resnet18")``, ``somelib.build_model(cfg)``): the script owns that model,
    wherever the library leaves it.  None for a callable of the project, and for a call one of
    whose arguments is ``handed`` a device (``build_model(cfg, device=dev)``): the library places
    the model, as the file asked."""
    package = project.library_package(qualified)
    if package is None or project.origin(callee) is not None or any(handed(arg) for arg in call.args):
        return None
    return package


def names_a_placement(arg: cst.Arg) -> bool:
    """An argument that names a device or a placement: ``device=d``, ``gpu_ids=[0]``, ``dev``,
    ``get_device()``, ``args.device``, ``"cuda:0"``."""
    if arg.keyword is not None and (is_device_name(arg.keyword.value) or arg.keyword.value in _PLACING_KEYWORDS):
        return True
    value = arg.value.func if type(arg.value) is cst.Call else arg.value
    return is_device_name(dotted(value)) or (string_value(value) or "").split(":")[0] in _DEVICE_KINDS
