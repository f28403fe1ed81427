"""Removes the ``# type: ignore`` comments, or the error codes in them, that mypy reports
as unused (``warn_unused_ignores``): mypy has no fix for its own finding, and a change that
makes mypy understand more code (a narrowing, an annotation) leaves such comments behind.

    python scripts/drop_unused_ignores.py          # runs mypy (its files: pyproject.toml)
    mypy > report.txt; python scripts/drop_unused_ignores.py report.txt

Only comments change; run mypy again afterwards (a removed ignore can uncover nothing
new: mypy reported it as silencing nothing).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

_UNUSED = re.compile(r'^(?P<path>[^:]+):(?P<line>\d+): error: Unused "type: ignore(?:\[(?P<codes>[^\]]*)\])?" comment')
_IGNORE = re.compile(r"(?P<space>\s*)# type: ignore(?:\[(?P<codes>[^\]]*)\])?")


def unused_ignores(report: str) -> dict[str, dict[int, set[str] | None]]:
    """Per file, per line (from 1): the unused codes, or None when the whole comment is."""
    found: dict[str, dict[int, set[str] | None]] = defaultdict(dict)
    for line in report.splitlines():
        if match := _UNUSED.match(line):
            codes = match["codes"]
            found[match["path"]][int(match["line"])] = None if codes is None else {c.strip() for c in codes.split(",")}
    return found


def without_unused(line: str, unused: set[str] | None) -> str:
    """``line`` without its ignore comment (None), or without the ``unused`` codes in it."""
    match = _IGNORE.search(line)
    if match is None:
        raise ValueError(f"no type: ignore comment in {line!r}")
    kept = [] if unused is None else [c.strip() for c in (match["codes"] or "").split(",") if c.strip() not in unused]
    if kept:
        return f"{line[: match.start()]}{match['space']}# type: ignore[{','.join(kept)}]{line[match.end() :]}"
    rest = line[match.end() :]
    return line[: match.start()] + (rest if rest.strip() else rest.lstrip(" \t"))


def main(argv: list[str]) -> int:
    if argv:
        report = Path(argv[0]).read_text()
    else:
        report = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True).stdout
    changed = 0
    for path, lines_to_fix in unused_ignores(report).items():
        lines = Path(path).read_text().splitlines(keepends=True)
        for number, unused in lines_to_fix.items():
            lines[number - 1] = without_unused(lines[number - 1], unused)
            changed += 1
        Path(path).write_text("".join(lines))
    print(f"{changed} type: ignore comments changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
