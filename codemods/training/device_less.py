"""What decides that a training script picks no device at all (XLA005): whether it names
a device anywhere, whether what it takes from the project's own modules may put its
model or data on one, and which calls of other packages build the model it steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.shapes import is_device_name
from codemods.engine.nodes import dotted, string_value

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.device.facts import DeviceFacts
    from codemods.project.analysis import ProjectAnalysis


def names_a_device(analysis: DeviceAnalysis, device: DeviceFacts) -> bool:
    """The file names a device or a device check somewhere (a move aside); ``x.device`` of a
    tensor handed to a function (device.followed_devices) names none."""
    return bool(
        analysis.device_assignments
        or analysis.device_args - analysis.followed.only_following()
        or device.strings
        or device.calls
        or device.dot_cuda
        or device.cuda_indices
        or device.selections
        or device.ifs
        or device.flag_values
        or device.choosers
    )


def project_may_place(project_names: dict[str, tuple[str, str]], project: ProjectAnalysis) -> bool:
    """Some name the file imports from the project may put its model or data on a
    device: a module imported whole, one that could not be read, one that moves
    something or names a device anywhere, or one that converting would change (its
    holdings: ``torch.cuda.set_device(0)``, an FSDP wrap).  A model class of another
    module that names no device (``from model import GCNModelVAE``) leaves the model the
    file builds on the CPU."""
    for local in project_names:
        found = project.origin(local)
        if found is None:
            continue
        summary = found.summary
        if summary is None or not found.name or summary.names_device or summary.devices or summary.holds:
            return True
    return False


# Builders of followed packages whose models start on the CPU (``torchvision.models.resnet18()``,
# ``torch.hub.load(repo, name)``): the script owns the model they return, as it owns a torch.nn one.
MODEL_ZOOS = ("torchvision.models.", "torchaudio.models.")
HUB_LOADS = frozenset({"torch.hub.load"})
# Keywords that tell a library where to put what it builds, beside any ``*device*`` one.
_PLACING_KEYWORDS = frozenset(
    {"map_location", "gpu", "gpus", "gpu_id", "gpu_ids", "use_gpu", "use_cuda", "cuda", "accelerator"}
)
_DEVICE_KINDS = frozenset({"cuda", "cpu", "xla", "mps", "gpu", "tpu"})


def zoo_model(qualified: str | None) -> bool:
    """``qualified`` (a resolved callee) is a model builder of a followed package's zoo."""
    return qualified is not None and (qualified in HUB_LOADS or qualified.startswith(MODEL_ZOOS))


def library_model(qualified: str | None, call: cst.Call) -> str | None:
    """The package of an unfollowed library (``apis.unfollowed_package``) whose ``call`` builds
    a model without being told where to put it (``timm.create_model("resnet18")``,
    ``somelib.build_model(cfg)``): the script owns that model, wherever the library leaves it.
    None for any other call, and for one handed a device (``build_model(cfg, device=dev)``,
    ``init_detector(cfg, ckpt, "cuda:0")``): the library places it, as the file asked."""
    package = apis.unfollowed_package(qualified)
    if package is None or any(_places(arg) for arg in call.args):
        return None
    return package


def _places(arg: cst.Arg) -> bool:
    """An argument that names a device or a placement: ``device=d``, ``gpu_ids=[0]``, ``dev``,
    ``get_device()``, ``args.device``, ``"cuda:0"``."""
    if arg.keyword is not None and (is_device_name(arg.keyword.value) or arg.keyword.value in _PLACING_KEYWORDS):
        return True
    value = arg.value.func if type(arg.value) is cst.Call else arg.value
    return is_device_name(dotted(value)) or (string_value(value) or "").split(":")[0] in _DEVICE_KINDS
