"""What decides that a training script picks no device at all (XLA005): whether it names
a device anywhere, and whether what it takes from the project's own modules may put its
model or data on one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codemods.device.analysis import DeviceAnalysis
    from codemods.device.facts import DeviceFacts
    from codemods.project.analysis import ProjectAnalysis


def names_a_device(analysis: DeviceAnalysis, device: DeviceFacts) -> bool:
    """The file names a device or a device check somewhere (a move aside)."""
    return bool(
        analysis.device_assignments
        or analysis.device_args
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
