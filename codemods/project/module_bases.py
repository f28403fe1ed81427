"""Module classes across files: a class of this file whose base is a class of another project
module that derives ``torch.nn.Module`` (``class ControlledUnetModel(UNetModel)`` with
``UNetModel(nn.Module)`` in ``openaimodel.py``).  Its ``forward`` is a module's forward, run
within a training step, as that of a direct ``nn.Module`` subclass is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codemods.project.module_summary import ModuleSummary

# How many bases deep the lookup goes.
_MAX_DEPTH = 6


def project_module_class(analysis: Any, bases: tuple[str, ...]) -> bool:
    """Some base of a class of this file (``bases`` as written) is a class of another project module
    whose ``forward`` is a module's (ModuleSummary.forward_classes), or derives from one through that
    module's bases, a few deep.  ``analysis`` is the file's ProjectAnalysis."""
    for base in bases:
        found = analysis.origin(base)
        if found is None or found.summary is None or not found.name or "." in found.name:
            continue
        if _derives_module(analysis, found.summary, found.name, set(), 0):
            return True
    return False


def _derives_module(analysis: Any, summary: ModuleSummary, cls: str, seen: set[tuple[str, str]], depth: int) -> bool:
    if cls in summary.forward_classes:
        return True
    if depth >= _MAX_DEPTH or (summary.path, cls) in seen:
        return False
    seen.add((summary.path, cls))
    for base in next((bases for c, bases, _ in summary.classes if c == cls), ()):
        origin = summary.origin_of(base)  # imported from another project module: ``from .base import Net``
        if origin is None:
            continue  # (the module's own classes are in forward_classes already; outside the project)
        found = analysis.part.context.lookup_from(summary, *origin)
        if found is None or found.summary is None or not found.name or "." in found.name:
            continue
        if _derives_module(analysis, found.summary, found.name, seen, depth + 1):
            return True
    return False
