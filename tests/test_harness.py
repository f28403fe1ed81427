"""The test harness itself: when CI counts as set (executed tests must run there:
tests/conftest.py), the progress line of each executed test, and their parallel run."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ci import running_under_ci, torch_xla_installed
from tests.support.paths import ROOT


@pytest.mark.parametrize(
    ("value", "ci"),
    [
        (None, False),
        ("", False),
        ("0", False),
        ("false", False),
        ("False", False),
        ("no", False),
        ("true", True),
        ("1", True),
        ("yes", True),
    ],
)
def test_ci_false_means_not_ci(value: str | None, ci: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert running_under_ci() is ci


SAMPLE_TESTS = """\
import os
from pathlib import Path

import pytest


def worker(test):
    # Which xdist worker ran the test ("" in a run without workers).
    Path(__file__).with_name(f"{test}.worker").write_text(os.environ.get("PYTEST_XDIST_WORKER", ""))


@pytest.mark.executed
def test_slow():
    worker("slow")


def test_quick():
    worker("quick")
"""
SAMPLE_CONFTEST = (
    "from tests.conftest import pytest_cmdline_main, pytest_configure, pytest_runtest_logreport  # noqa: F401\n"
)


def _run_sample(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A test file with one executed test, run by pytest with this suite's hooks."""
    (tmp_path / "test_sample.py").write_text(SAMPLE_TESTS)
    (tmp_path / "conftest.py").write_text(SAMPLE_CONFTEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    executed: runs converted fixtures\n")
    # Not this run's xdist worker variables: the sample run must decide its own workers.
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    environment = {**inherited, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path[1:]])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


def test_an_executed_test_prints_a_line_as_it_finishes(tmp_path: Path) -> None:
    """Long test files show their progress: each executed test's outcome and time, even in -q."""
    result = _run_sample(tmp_path, "-n", "0") if _has_xdist() else _run_sample(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^test_sample.py::test_slow passed in \d+ s$", result.stdout, flags=re.M), result.stdout
    assert "test_quick passed" not in result.stdout


def _has_xdist() -> bool:
    return importlib.util.find_spec("xdist") is not None


def test_executed_tests_run_on_every_core(tmp_path: Path) -> None:
    """With pytest-xdist (the test extra) and torch_xla installed, a run that may select
    executed tests gets workers (-n auto), and each executed test still prints its line;
    the quick subset (-m "not executed") and an explicit -n 0 run in one process."""
    pytest.importorskip("xdist", reason="pytest-xdist comes with the test extra: pip install -e '.[test]'")
    if not torch_xla_installed():
        pytest.skip("torch_xla not installed: executed tests are skipped, and so is their parallel run")
    parallel = _run_sample(tmp_path)
    assert parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert (tmp_path / "slow.worker").read_text().startswith("gw"), parallel.stdout
    assert re.search(r"^test_sample.py::test_slow passed in \d+ s$", parallel.stdout, flags=re.M), parallel.stdout
    for args in (("-m", "not executed"), ("-n", "0")):
        serial = _run_sample(tmp_path, *args)
        assert serial.returncode == 0 and (tmp_path / "quick.worker").read_text() == "", serial.stdout
