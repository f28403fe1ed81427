"""Where the project's folders are, from the tests' point of view."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
# Keyed by target and fixture: tests/snapshots/<target>/<fixture>.diff and .report.txt.
SNAPSHOTS = ROOT / "tests" / "snapshots"
# The torch_xla 1.13 name manifest, the AWS guide's code lines, the doctor's scripts.
DATA = ROOT / "tests" / "data"
