"""The code passes its linter and its type checker, with the configuration in
pyproject.toml ([tool.ruff], [tool.mypy]): CI runs them through this test, so that the
README's one test command covers them too."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "--no-fix", "codemods", "tests", "scripts"], id="ruff"),
        # The files to check (the codemods package) are in [tool.mypy]; the cache
        # (.mypy_cache, ignored by git) makes a second run take a second.
        pytest.param(["mypy"], id="mypy"),
    ],
)
def test_the_code_passes(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{' '.join(command)} found:\n{result.stdout}{result.stderr}"
