"""Classes across files: a class of this file whose base is a class of another project module
that derives ``torch.nn.Module`` (``class ControlledUnetModel(UNetModel)`` with
``UNetModel(nn.Module)`` in ``openaimodel.py``).  Its ``forward`` is a module's forward, run
within a training step, as that of a direct ``nn.Module`` subclass is.  The same lookup follows
other kinds of class the summaries name: DistributedDataParallel subclasses (``class
DDP(DistributedDataParallel)`` in ``ddp_utils.py``, built in ``trainer.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codemods.project.module_summary import ModuleSummary

# How many bases deep the lookup goes.
_MAX_DEPTH = 6

# Whether a class of a module (summary, class name) is of the kind looked for.
Kind = Callable[["ModuleSummary", str], bool]


def _module_class(summary: ModuleSummary, cls: str) -> bool:
    return cls in summary.forward_classes


def ddp_class(summary: ModuleSummary, cls: str) -> bool:
    """The module's class ``cls`` derives from torch's DistributedDataParallel (ModuleSummary.ddp_classes)."""
    return cls in summary.ddp_classes


def project_module_class(analysis: Any, bases: tuple[str, ...]) -> bool:
    """Some base of a class of this file (``bases`` as written) is a class of another project
    module whose ``forward`` is a module's (ModuleSummary.forward_classes), or derives from one
    through that module's bases, a few deep.  ``analysis`` is the file's ProjectAnalysis."""
    return project_class_of(analysis, bases, _module_class)


def project_class_of(analysis: Any, names: tuple[str, ...], kind: Kind) -> bool:
    """Some of ``names`` (as written in this file: the bases of one of its classes, or a callee)
    is a class of another project module of ``kind``, or derives from one through that module's
    bases, a few deep.  ``analysis`` is the file's ProjectAnalysis."""
    for name in names:
        found = analysis.origin(name)
        if found is None or found.summary is None or not found.name or "." in found.name:
            continue
        if _derives(analysis, found.summary, found.name, kind, set(), 0):
            return True
    return False


def _derives(
    analysis: Any, summary: ModuleSummary, cls: str, kind: Kind, seen: set[tuple[str, str]], depth: int
) -> bool:
    if kind(summary, cls):
        return True
    if depth >= _MAX_DEPTH or (summary.path, cls) in seen:
        return False
    seen.add((summary.path, cls))
    for base in next((bases for c, bases, _ in summary.classes if c == cls), ()):
        origin = summary.origin_of(base)  # imported from another project module: ``from .base import Net``
        if origin is None:
            continue  # (the module's own classes are of the kind already; outside the project)
        found = analysis.part.context.lookup_from(summary, *origin)
        if found is None or found.summary is None or not found.name or "." in found.name:
            continue
        if _derives(analysis, found.summary, found.name, kind, seen, depth + 1):
            return True
    return False
