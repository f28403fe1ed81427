"""pytest's hooks and the session fixtures; what the tests share is in tests/support/."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ci import running_under_ci, torch_xla_installed
from tests.support.repos import hook_repository


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project as pre-commit sees a hook repository: a commit of the working tree
    (uncommitted changes included, build leftovers not)."""
    return hook_repository(tmp_path_factory.mktemp("hook-repo"))


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(autouse=True)
def restored_environment() -> Iterator[None]:
    """Each test starts from the same environment: code that a test runs in its process may
    set variables (Lightning's XLA bf16 precision sets XLA_USE_BF16), which the scripts that
    later tests start in the same pytest worker would inherit."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Executed tests run on every core: with pytest-xdist installed (the test extra),
    torch_xla installed and a run that may select executed tests (no "not executed" in
    -m), ``-n auto`` unless -n was given (``-n 0``: one process); workers share tests out
    with ``--dist loadgroup`` unless --dist says otherwise.
    (Runs before xdist's own hook, which reads these options.)"""
    if not config.pluginmanager.has_plugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and "not executed" not in (config.option.markexpr or ""):
        if torch_xla_installed():
            config.option.numprocesses = "auto"
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadgroup"  # the pre-commit tests share one worker (xdist_group)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """An executed test takes seconds to minutes: each prints a line as it finishes,
    whatever the verbosity, so that a long test file shows its progress."""
    if report.when != "call" or "executed" not in report.keywords:
        return
    reporter = _terminal_reporter
    if reporter is not None and reporter.verbosity <= 0:
        if getattr(reporter._tw, "width_of_current_line", 0):  # after a row of dots
            reporter.write("\n")
        reporter.write_line(f"{report.nodeid} {report.outcome} in {report.duration:.0f} s")


_terminal_reporter: pytest.TerminalReporter | None = None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    global _terminal_reporter
    if not hasattr(config, "workerinput"):  # xdist's workers report to the main process
        _terminal_reporter = config.pluginmanager.get_plugin("terminalreporter")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked ``executed`` need torch_xla: skipped without it, except under CI,
    where a missing torch_xla is an error (they must run there)."""
    executed = [item for item in items if item.get_closest_marker("executed")]
    if not executed or torch_xla_installed():
        return
    if running_under_ci():
        raise pytest.UsageError("CI is set but torch_xla is not installed: pip install -e '.[xla]'")
    skip = pytest.mark.skip(reason="torch_xla not installed: pip install -e '.[xla]'")
    for item in executed:
        item.add_marker(skip)
