"""No module of the package is over 700 lines (issue 34): a module that long holds more
than one thing, and is split into modules named for what each holds."""

from __future__ import annotations

from tests.support.paths import ROOT

LIMIT = 700


def test_no_module_is_over_the_limit() -> None:
    lengths = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "codemods").rglob("*.py")
    }
    assert len(lengths) > 100  # the scan sees the whole package
    assert {path: n for path, n in lengths.items() if n > LIMIT} == {}
