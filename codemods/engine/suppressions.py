"""Suppression comments, for every kind of file the tool reads.

``# xla-codemod: ignore`` silences every rule on a line, ``# xla-codemod: ignore[XLA101,XLA5]``
the rules with those codes or code prefixes.  In Python the comment silences the line it is
on (findings, and fixes, that start there); in a Dockerfile, where a comment takes a whole
line, the instruction on the line after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codemods.engine.rule import Rule

_COMMENT = re.compile(r"#\s*xla-codemod:\s*ignore(?:\[([A-Za-z0-9_, ]+)\])?")


@dataclass(frozen=True)
class Suppressions:
    """The codes (or prefixes, or ALL) silenced on each line (1-based)."""

    by_line: dict[int, tuple[str, ...]]

    def silences(self, rule: Rule, line: int) -> bool:
        codes = self.by_line.get(line)
        return codes is not None and any(c == "ALL" or rule.code.startswith(c) for c in codes)


def suppressions(text: str, *, comment_lines_only: bool = False) -> Suppressions:
    """The suppression comments of a file's text.  ``comment_lines_only`` (Dockerfiles):
    only a line that is a comment counts, and it silences the line after it."""
    by_line: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _COMMENT.search(line)
        if match is None:
            continue
        codes = tuple(c.strip() for c in (match.group(1) or "ALL").split(",") if c.strip())
        if not comment_lines_only:
            by_line[number] = codes
        elif line.lstrip().startswith("#"):
            by_line[number + 1] = codes
    return Suppressions(by_line)
