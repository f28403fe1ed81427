"""What the files of a run tell each other once every one is converted: their summaries,
as the conditions of held findings read them (plain data, no LibCST).

A rewrite that cannot tell alone whether a finding stands (a step in a function that no
loop of its file calls, in a file that other files of the run import) reports it with a
condition, ``ctx.report(..., held=StandsUnlessCalled(function))``: an
``engine.report.HeldCondition``, defined by the concern that holds findings with it. When
the run's files are all converted, the runner gathers their summaries here once
(``RunSummaries``) and asks each held finding's condition whether it stands
(runner.release_held). A condition reads the facts it needs through ``gathered``, which
works them out of the summaries once per run, however many findings ask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from codemods.project.module_summary import ModuleSummary

GatheredT = TypeVar("GatheredT")


class RunSummaries:
    """The summaries of a run's converted files, in the run's order, each with its path as
    findings show it; ``file_of`` turns such a path (the paths that summaries name) into
    the resolved file, as a held finding's holder is given."""

    def __init__(self, summaries: Sequence[ModuleSummary], file_of: Callable[[str], Path]) -> None:
        self.summaries = summaries
        self.file_of = file_of
        self._gathered: dict[Callable[[RunSummaries], object], object] = {}

    def gathered(self, gather: Callable[[RunSummaries], GatheredT]) -> GatheredT:
        """What ``gather`` works out of the run's summaries, worked out once."""
        if gather not in self._gathered:
            self._gathered[gather] = gather(self)
        return cast(GatheredT, self._gathered[gather])
