"""When training's held findings stand (engine.report.HeldCondition), from what the run's
files drive (project/run_summaries.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codemods.engine.report import Finding
from codemods.project.run_summaries import RunSummaries

if TYPE_CHECKING:
    from codemods.training.facts import CallerOptimizer


@dataclass(frozen=True)
class StandsUnlessCalled:
    """An optimizer step in ``function`` that no loop of its file drives (UNDRIVEN_STEP): the finding
    stands unless a file of the run calls the function, which then drives its step."""

    function: str  # qualified within the holder

    @staticmethod
    def driven(run: RunSummaries) -> frozenset[tuple[Path, str]]:
        """The step callables that the run's files call: (their file, their name)."""
        return frozenset((run.file_of(path), name) for summary in run.summaries for path, name in summary.drives)

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        return None if (holder, self.function) in run.gathered(StandsUnlessCalled.driven) else finding


@dataclass(frozen=True)
class StandsUnlessFsdpHandedTo:
    """A plain ``optimizer.step()`` in ``function``, whose optimizer comes from the caller, in a
    file that a file wrapping a model in FSDP imports (OPTIMIZER_STEP's report): it stands unless a
    file of the run hands the function an FSDP model (then the plain step is right)."""

    function: str  # qualified within the holder

    @staticmethod
    def training_fsdp(run: RunSummaries) -> frozenset[tuple[Path, str]]:
        """The callables that the run's files hand an FSDP model to: (their file, their name)."""
        return frozenset((run.file_of(path), name) for summary in run.summaries for path, name in summary.trains_fsdp)

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        return None if (holder, self.function) in run.gathered(StandsUnlessFsdpHandedTo.training_fsdp) else finding


@dataclass(frozen=True)
class StandsUnlessOptimizerHandedTo:
    """A step ported on what ``handed.callable`` is handed (training/step_kinds.py): it stands
    unless a file of the run hands that parameter a known optimizer."""

    handed: CallerOptimizer

    @staticmethod
    def optimizers_handed(run: RunSummaries) -> frozenset[tuple[Path, str, int, str]]:
        """The callables the run's files hand an optimizer: (their file, their name, position, keyword)."""
        return frozenset(
            (run.file_of(path), name, index, keyword)
            for summary in run.summaries
            for path, name, index, keyword in summary.hands_optimizers
        )

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        handed = self.handed
        seen = {(holder, handed.callable, handed.index, ""), (holder, handed.callable, -1, handed.parameter)}
        return None if seen & run.gathered(StandsUnlessOptimizerHandedTo.optimizers_handed) else finding
