"""When the device concern's held findings stand (engine.report.HeldCondition), from the functions
that the run's files move under a flag (project/run_summaries.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from codemods.engine.report import Finding
from codemods.project.run_summaries import RunSummaries


@dataclass(frozen=True)
class StandsIfHandedToAFlagMove:
    """A CUDA check that stays, handed as ``keyword=`` to a method this file cannot follow
    (``self.task.train_epoch(..., cuda_enabled=self.cuda_enabled)``, ``self.task`` built by a
    registry): whether a move hangs on it depends on what that method runs.  ``error``: XLA119's
    finding, which stands where a function of the run's files of that name moves to the device
    only if its parameter ``keyword`` is true (their summaries' ``flag_moves``), and then names
    them, ``tail`` after them; else XLA105's warning, which stands where none does."""

    method: str
    keyword: str
    tail: str
    error: bool

    @staticmethod
    def movers(run: RunSummaries) -> dict[tuple[str, str], list[str]]:
        """The functions of the run's files that move only if a parameter is true, by (their
        name without the class, the parameter): each as a finding names it."""
        found: dict[tuple[str, str], list[str]] = {}
        for summary in run.summaries:
            for function, _, parameter in sorted(summary.flag_moves):
                found.setdefault((function.rsplit(".", 1)[-1], parameter), []).append(f"`{function}` in {summary.path}")
        return found

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        movers = run.gathered(StandsIfHandedToAFlagMove.movers).get((self.method, self.keyword))
        if not self.error:
            return None if movers else finding
        if not movers:
            return None
        named = ", ".join(movers)
        return replace(
            finding,
            message=f"{finding.message}; {named} moves to the device only if `{self.keyword}` is true: where that is "
            f"what runs, {self.tail}",
        )
