"""When the CUDA-only concern's held findings stand (engine.report.HeldCondition), from the
calls that the run's files make (project/run_summaries.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from codemods.engine.report import Finding
from codemods.project.run_summaries import RunSummaries


@dataclass(frozen=True)
class StandsIfCalledWithSparse:
    """``sparse=<parameter>`` in ``function``, a parameter that defaults to False, in a file
    that other files of the run import (SPARSE_GRADIENTS): the finding stands only if a file of
    the run calls the function with something other than False for it, and then names those
    calls (after the finding's message, which says what the parameter does)."""

    function: str  # qualified within the holder

    @staticmethod
    def calls(run: RunSummaries) -> dict[tuple[Path, str], list[str]]:
        """The calls that may pass a true ``sparse`` to such a function, by (its file, its
        name): each as written, with the file it is in."""
        found: dict[tuple[Path, str], list[str]] = {}
        for summary in run.summaries:
            for path, name, call in sorted(summary.sparse_calls):
                found.setdefault((run.file_of(path), name), []).append(f"{call} in {summary.path}")
        return found

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        callers = run.gathered(StandsIfCalledWithSparse.calls).get((holder, self.function))
        if callers is None:
            return None
        return replace(finding, message=passing_true(finding.message, ", ".join(callers)))


def passing_true(head: str, calls: str) -> str:
    """A ``sparse=<parameter>`` finding's message (``head``: what the parameter does) where
    ``calls`` may pass True."""
    return f"{head}, but {calls} may pass True: pass False on XLA"


@dataclass(frozen=True)
class StandsUnlessCalledUnderCuda:
    """A CUDA-only call in ``function``, a module-level function that its own file never
    names again, in a file that other files of the run import (CUDA_API): the finding is
    cleared when the run's files call the function, and only under a CUDA availability
    check (False on XLA: the function never runs there)."""

    function: str

    @staticmethod
    def calls(run: RunSummaries) -> tuple[frozenset[tuple[Path, str]], frozenset[tuple[Path, str]]]:
        """The functions called under a CUDA availability check, and those called elsewhere,
        by (their file, their name)."""
        guarded = frozenset(
            (run.file_of(path), name) for summary in run.summaries for path, name in summary.cuda_guarded_calls
        )
        other = frozenset((run.file_of(path), name) for summary in run.summaries for path, name in summary.other_calls)
        return guarded, other

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        guarded, other = run.gathered(StandsUnlessCalledUnderCuda.calls)
        key = (holder, self.function)
        return None if key in guarded and key not in other else finding
