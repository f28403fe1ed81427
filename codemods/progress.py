"""A progress bar for long runs, on stderr and only on a terminal: never in pipes,
pre-commit output or CI logs, where it would only be noise."""

from __future__ import annotations

import os
import time
from typing import TextIO

from codemods.engine.report import FileReport

_WIDTH = 30


def wanted(stream: TextIO) -> bool:
    """A person is watching ``stream``: a terminal, outside pre-commit and CI."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return (
        terminal and os.environ.get("TERM") != "dumb" and not os.environ.get("CI") and not os.environ.get("PRE_COMMIT")
    )


class Progress:
    """Counts reports as they arrive; draws a bar once the run has lasted ``delay``
    seconds (short runs never show one), at most ten times a second."""

    def __init__(self, total: int, stream: TextIO, delay: float = 1.0) -> None:
        self.total = total
        self.stream = stream
        self.start = time.monotonic()
        self.delay = delay
        self.done = self.failed = 0
        self.drawn_at: float | None = None

    def __call__(self, report: FileReport) -> None:
        self.done += 1
        self.failed += report.error is not None
        now = time.monotonic()
        if now - self.start < self.delay or (self.drawn_at is not None and now - self.drawn_at < 0.1):
            return
        self.drawn_at = now
        filled = _WIDTH * self.done // max(self.total, 1)
        failed = f", {self.failed} failed" if self.failed else ""
        self.stream.write(f"\r[{'#' * filled}{'-' * (_WIDTH - filled)}] {self.done}/{self.total} files{failed}\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        """Clears the bar, so the report starts on a clean line."""
        if self.drawn_at is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
