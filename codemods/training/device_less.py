"""What decides that a training script picks no device at all (XLA005): whether it names
a device anywhere, whether what it takes from the project's own modules may put its
model or data on one, and which model zoos of followed packages build the model it steps
(a package the tool does not follow builds one too: device/library_models.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.library_models import library_builder, names_a_placement
from codemods.engine.nodes import dotted
from codemods.project.module_summary import Found

if TYPE_CHECKING:
    from collections.abc import Callable

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
    device: one of a module that could not be read, that moves something or names a device
    anywhere, or that converting would change (its holdings: ``torch.cuda.set_device(0)``, an
    FSDP wrap).  A model class of another module that names no device (``from model import
    GCNModelVAE``) leaves the model the file builds on the CPU; so does a module imported whole
    (``import args``, a file of constants; ``import model`` then ``model.GAE(adj)``) when neither
    it, nor what the file takes of it, nor the project modules it imports names from do."""
    for local in project_names:
        found = project.origin(local)
        if found is None:
            continue
        if _may_place(found, project, set(), 0):
            return True
        if found.name:
            continue
        for holder, attribute in project.attribute_uses:  # ``model.GAE``: where it is defined
            if holder == local and attribute != "__dict__":
                used = project.origin(f"{local}.{attribute}")
                if used is not None and _may_place(used, project, set(), 0):
                    return True
    return False


# How many modules deep the project modules a module imported whole imports names from are read.
_MAX_DEPTH = 3


def _may_place(found: Found, project: ProjectAnalysis, seen: set[str], depth: int) -> bool:
    """The module of ``found`` could not be read, or it names a device or holds code to
    convert; for a module imported whole, or one of the project modules it imports names from
    (a package's ``__init__`` re-exporting its model classes), a few modules deep."""
    summary = found.summary
    if summary is None or summary.names_device or summary.devices or summary.holds:
        return True
    if found.name or summary.path in seen:
        return False
    seen.add(summary.path)
    for _, module, name in summary.imported:
        other = project.part.context.lookup_from(summary, module, name)
        if other is None:
            continue  # (a name of a module outside the project)
        if depth >= _MAX_DEPTH or _may_place(Found(other.summary, ""), project, seen, depth + 1):
            return True
    return False


def builds_model(
    project: ProjectAnalysis, callee: str, qualified: str | None, call: cst.Call, constructor: bool
) -> bool:
    """``call`` of ``callee`` (``qualified`` resolved) builds a model: a model class (``constructor``),
    any callable of another project module (``build_model()``), a class looked up in one by its name
    (``cls = getattr(models, name)``, then ``cls(adj)``; ``getattr(models, name)(adj)``), a model zoo's
    builder (``torchvision.models.resnet18()``) or an unfollowed library's call not handed a device
    (``timm.create_model(name)``): what it returns is the model when the optimizer steps its parameters."""
    if constructor or project.origin(callee) is not None or callee in project.attribute_lookups:
        return True
    return zoo_model(qualified) or library_builder(project, callee, qualified, call, names_a_placement) is not None


def looked_up_in(func: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], str | None]) -> str | None:
    """``getattr(models, args.model)`` (the builtin), as the callee of a call: what it looks the
    callable up in, as written (``models``)."""
    if type(func) is not cst.Call or dotted(func.func) != "getattr" or resolve(func.func) is not None:
        return None
    return dotted(func.args[0].value) if len(func.args) >= 2 else None


# Builders of followed packages whose models start on the CPU (``torchvision.models.resnet18()``,
# ``torch.hub.load(repo, name)``): the script owns the model they return, as it owns a torch.nn one.
MODEL_ZOOS = ("torchvision.models.", "torchaudio.models.")
HUB_LOADS = frozenset({"torch.hub.load"})


def zoo_model(qualified: str | None) -> bool:
    """``qualified`` (a resolved callee) is a model builder of a followed package's zoo."""
    return qualified is not None and (qualified in HUB_LOADS or qualified.startswith(MODEL_ZOOS))
