"""What a rule is: a code, a severity, a summary, why it matters on XLA, and examples.

Severities say what happens if the finding is left as it is: ``error`` (the converted
script would crash, use the wrong device or silently change results), ``warning`` (it
runs, but slowly: recompiles, host syncs) and ``info`` (no effect on XLA).  Users gate
commits on errors.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")  # most severe first


@dataclass(frozen=True)
class Example:
    """Code the rule flags, and what the tool makes of it (None: left as it is).
    ``filename`` says what kind of file it is (a training script, a launcher, a Dockerfile)."""

    before: str
    after: str | None = None
    target: str = "2.9"
    filename: str = "train.py"


def example(before: str, after: str | None = None, *, target: str = "2.9", filename: str = "train.py") -> Example:
    """An Example written as indented triple-quoted blocks (dedented here)."""
    return Example(_dedent(before), None if after is None else _dedent(after), target, filename)


def _dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    fixable: bool
    why: str = ""
    examples: tuple[Example, ...] = ()


def at_least(severity: Severity, threshold: Severity) -> bool:
    """True if ``severity`` is ``threshold`` or more severe."""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)
