"""The code passes its linter, its formatter's check and its type checker, with the configuration in
pyproject.toml ([tool.ruff], [tool.mypy]): CI runs them through this test, so that the
README's one test command covers them too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT, scripts_importable


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "--no-fix", "codemods", "tests", "scripts"], id="ruff"),
        # One layout, the formatter's: `ruff format codemods tests scripts` writes it.
        pytest.param(["ruff", "format", "--check", "codemods", "tests", "scripts"], id="ruff-format"),
        # The files to check (the package, the tests, the scripts) are in [tool.mypy]; the cache
        # (.mypy_cache, ignored by git) makes a second run take a second.
        pytest.param(["mypy"], id="mypy"),
    ],
)
def test_the_code_passes(command: list[str]) -> None:
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{' '.join(command)} found:\n{result.stdout}{result.stderr}"


def test_unused_ignores_are_dropped_and_used_ones_kept() -> None:
    """scripts/drop_unused_ignores.py on mypy's report: a whole comment, or some of its
    codes, removed; the rest of the line (another comment) kept."""
    with scripts_importable():
        from drop_unused_ignores import unused_ignores, without_unused

    report = (
        'a.py:3: error: Unused "type: ignore" comment  [unused-ignore]\n'
        'a.py:7: error: Unused "type: ignore[override]" comment  [unused-ignore]\n'
        "a.py:9: error: Incompatible types in assignment  [assignment]\n"
    )
    assert unused_ignores(report) == {"a.py": {3: None, 7: {"override"}}}
    assert without_unused("x = f()  # type: ignore[arg-type]\n", None) == "x = f()\n"
    assert without_unused("x = f()  # type: ignore[attr-defined]  # why\n", None) == "x = f()  # why\n"
    assert (
        without_unused("def f(a):  # type: ignore[no-untyped-def,override]\n", {"override"})
        == "def f(a):  # type: ignore[no-untyped-def]\n"
    )
