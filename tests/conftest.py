"""pytest's hooks and the session fixtures; what the tests share is in tests/support/."""

from __future__ import annotations

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
