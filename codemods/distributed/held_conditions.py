"""When the distributed concern's held findings stand (engine.report.HeldCondition), from
the files of the run that wrap a model in DDP (project/run_summaries.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codemods.engine.report import Finding
from codemods.project.run_summaries import RunSummaries


@dataclass(frozen=True)
class StandsUnlessImportedUnderDdp:
    """A scaled backward whose optimizer step is elsewhere, in a file without DDP that other
    files of the run import (AMP_GRADIENT_ALL_REDUCE): the finding stands unless a file of the
    run that wraps a model in DistributedDataParallel imports the holder (DDP reduces the
    gradients in backward)."""

    @staticmethod
    def under_ddp(run: RunSummaries) -> frozenset[Path]:
        """The files that a file of the run wrapping a model in DDP imports."""
        return frozenset(run.file_of(path) for summary in run.summaries for path in summary.ddp_imports)

    def standing(self, finding: Finding, holder: Path, run: RunSummaries) -> Finding | None:
        return None if holder in run.gathered(StandsUnlessImportedUnderDdp.under_ddp) else finding
