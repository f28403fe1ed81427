"""Where a callable of the project runs, as the obligations' findings name it (for
device/obligations.py): a module this run does not convert, or one that calls into such a
module, and what a callable of this file or of a converted module feeds a model unmoved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.handed_devices import HandedDevices
from codemods.engine.nodes import call_args, dotted
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import UnmovedFeeding
from codemods.training.handed_parameters import hands_the_cpu

if TYPE_CHECKING:
    import libcst as cst

    from codemods.device.obligation_records import Move


def project_moves_argument(project: ProjectAnalysis, call: cst.Call) -> bool:
    """The call hands something to a callable of another module of the project that moves it to
    the device the call hands in (``to_device(v, device)``) or, converted, to the XLA device."""
    func = dotted(call.func)
    found = project.origin(func) if func is not None else None
    summary = found.summary if found is not None else None
    if found is None or summary is None:
        return False
    positional, keywords = call_args(call)
    arguments = [(i, None) for i, a in enumerate(positional) if not a.star] + [(None, k) for k in keywords]
    for index, keyword in arguments:
        moved = summary.moves_argument(found.name, index, keyword)
        if moved is None:
            continue
        xla, device_at, _ = moved
        if device_at is not None and not hands_the_cpu(call, *device_at):
            return True  # (to the device the caller hands in: its own)
        if xla and device_at is None and not summary.pending:
            return True
    return False


class ProjectCallables(HandedDevices):
    """The part of ObligationAnalysis that places the project's callables."""

    moves: dict[str, list[Move]]
    params: dict[str, list[str]]

    def _moves_argument(self, call: cst.Call) -> bool:
        """The call hands something to a helper of the project that moves it to the device: one
        of this file's functions (walked already) that moves that parameter (``return
        item.to(device)``), or one of another module that moves it to the device the call hands in
        (``to_device(v, device)``) or, converted, to the XLA device (a batch it returns is on
        the device, as after ``v.to(device)``)."""
        func = dotted(call.func)
        if func is None:
            return False
        positional, keywords = call_args(call)
        if "." not in func and func in self.params:  # one of this file's functions
            params = self.params[func]
            handed = [params[i] for i, a in enumerate(positional) if not a.star and i < len(params)]
            return any(
                move.scope == func
                for name in [*handed, *keywords]
                if name in params
                for move in self.moves.get(name, ())
            )
        return project_moves_argument(self.walk.analysis(ProjectAnalysis), call)

    def _unconverted(self, func: str) -> str | None:
        """Where the callable ``func`` of a project module runs code that this run does not
        convert, as a finding says it (None: outside the project, or converted)."""
        found = self.walk.analysis(ProjectAnalysis).origin(func)
        if found is None:
            return None
        if found.summary is None:
            return f"{self.walk.analysis(ProjectAnalysis).module_file(func)}, which this run does not read"
        if found.summary.pending:
            self._named(found.summary.path)
            return f"{found.summary.path}, which this run does not convert"
        via = found.summary.pending_via(found.name)
        if not via:
            return None
        self._named(found.summary.path, via)
        return f"{found.summary.path}, which calls into {via}, which this run does not convert"

    def _named(self, *paths: str) -> None:
        """A finding names ``paths``, modules the run does not convert (or a module that calls
        into one)."""
        self.part.named_modules.update(path for path in paths if path)

    def _fed_by(self, callee: str, pending: bool = False) -> tuple[list[UnmovedFeeding], str]:
        """What ``callee`` (of this file, or of a converted project module; with ``pending``, also
        of one this run does not convert) feeds unmoved, and where it is, as a finding names it."""
        local = sorted(entry for entry in self.part.unmoved_feeding if entry.callable == callee)
        if local:
            return local, "in this file"
        found = self.walk.analysis(ProjectAnalysis).origin(callee)
        summary = found.summary if found is not None else None
        if found is None or summary is None:
            return [], ""  # unread
        if summary.pending:
            # Still to convert: its loops keep their CUDA moves (XLA003 names them), and a batch
            # it never moves stays on the CPU there too (``_handed_loaders`` reports the call).
            return (
                (summary.feeds_unmoved(found.name), f"in {summary.path}, which this run does not convert")
                if (pending)
                else ([], "")
            )
        return summary.feeds_unmoved(found.name), f"in {summary.path}"
