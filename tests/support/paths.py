"""Where the project's folders are, from the tests' point of view."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
# Keyed by target and fixture: tests/snapshots/<target>/<fixture>.diff and .report.txt.
SNAPSHOTS = ROOT / "tests" / "snapshots"
# The API inventories of the target releases, the AWS guide's code lines, the doctor's scripts.
DATA = ROOT / "tests" / "data"
SCRIPTS = ROOT / "scripts"


@contextmanager
def scripts_importable() -> Iterator[None]:
    """scripts/ first on sys.path, as when one of them runs: they are top-level modules
    (``import smoke_scripts``), and so they are to mypy (mypy_path in pyproject.toml)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        yield
    finally:
        sys.path.remove(str(SCRIPTS))
