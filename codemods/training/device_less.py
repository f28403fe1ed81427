"""What decides that a training script picks no device at all (XLA005): whether it names
a device anywhere, whether what it takes from the project's own modules may put its
model or data on one, and which model zoos of followed packages build the model it steps
(a package the tool does not follow builds one too: device/library_models.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def zoo_model(qualified: str | None) -> bool:
    """``qualified`` (a resolved callee) is a model builder of a followed package's zoo."""
    return qualified is not None and (qualified in HUB_LOADS or qualified.startswith(MODEL_ZOOS))
