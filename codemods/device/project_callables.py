"""Where a callable of the project runs, as the obligations' findings name it (for
device/obligations.py): a module this run does not convert, or one that calls into such a
module, and what a callable of this file or of a converted module feeds a model unmoved."""

from __future__ import annotations

from codemods.device.handed_devices import HandedDevices
from codemods.project.analysis import ProjectAnalysis
from codemods.project.module_summary import UnmovedFeeding


class ProjectCallables(HandedDevices):
    """The part of ObligationAnalysis that places the project's callables."""

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
