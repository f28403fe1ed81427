"""The order of a run: its files in rounds, each after the ones it imports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def waves(files: Sequence[Path], depends: Mapping[Path, set[Path]]) -> list[list[Path]]:
    """The files in rounds, each after the ones it imports (an import cycle goes last,
    its members read each other's summaries as they can)."""
    remaining = list(files)
    done: set[Path] = set()
    rounds: list[list[Path]] = []
    while remaining:
        ready = [f for f in remaining if depends.get(f, set()) <= done or not (depends[f] & set(remaining))]
        if not ready:
            ready = remaining
        rounds.append(ready)
        done.update(ready)
        remaining = [f for f in remaining if f not in done]
    return rounds
