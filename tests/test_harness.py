"""The test harness itself: when CI counts as set (executed tests must run there: tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.support.ci import running_under_ci


@pytest.mark.parametrize(
    ("value", "ci"),
    [(None, False), ("", False), ("0", False), ("false", False), ("False", False), ("no", False),
     ("true", True), ("1", True), ("yes", True)],
)
def test_ci_false_means_not_ci(value: str | None, ci: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert running_under_ci() is ci
