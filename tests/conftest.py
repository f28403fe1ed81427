from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codemods import Conversion, convert_source
from codemods.engine.report import unified_diff
from codemods.project.resolver import Project, summarise_with
from codemods.rules import RuleSelection

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


# Launcher scripts and Dockerfiles: not training scripts (tests/test_launchers.py has them).
NOT_TRAINING_SCRIPTS = ("launchers", "containers")


def fixture_scripts() -> list[Path]:
    """Every training script under fixtures/, as paths relative to it."""
    return sorted(
        p.relative_to(FIXTURES)
        for p in FIXTURES.rglob("*.py")
        if "__pycache__" not in p.parts and p.relative_to(FIXTURES).parts[0] not in NOT_TRAINING_SCRIPTS
    )


def fixture_project(script: Path, target: str) -> Project:
    """The project a fixture belongs to, as a run over its folder sees it: a script in a
    folder of its own converts with the whole folder; a lone script with itself."""
    group = FIXTURES / script.parts[0]
    files = sorted(group.rglob("*.py")) if group.is_dir() else [group]
    return Project(group if group.is_dir() else FIXTURES, summarise_with(target, RuleSelection(), None), in_run=files)


def convert_fixture(script: Path, target: str, source: bytes | None = None) -> Conversion:
    """The fixture (or ``source`` in its place) converted as a run over its folder would."""
    imports = fixture_project(script, target).imports_of(FIXTURES / script)
    return convert_source((FIXTURES / script).read_bytes() if source is None else source, target=target, imports=imports)


def review_diff(script: Path, before: bytes, after: bytes) -> str:
    """A conversion as a reviewer reads it: the tool's own ``--diff`` of the file (every
    changed byte shows, untouched code appears only as context); "unchanged" for none."""
    if before == after:
        return "unchanged\n"
    return unified_diff(str(script), before.decode("utf-8"), after.decode("utf-8"))


# What installing this project as a pre-commit hook repository needs.
PROJECT_FILES = ["pyproject.toml", "setup.cfg", "README.md", ".pre-commit-hooks.yaml", "codemods"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project as pre-commit sees a hook repository: a commit of the working tree
    (uncommitted changes included, build leftovers not)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "snapshot", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def torch_xla_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch_xla") is not None


def running_under_ci() -> bool:
    """CI is set to something other than "", "0", "false" or "no" (any case)."""
    import os

    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked ``executed`` need torch_xla: skipped without it, except under CI,
    where a missing torch_xla is an error (they must run there)."""
    import pytest

    executed = [item for item in items if item.get_closest_marker("executed")]
    if not executed or torch_xla_installed():
        return
    if running_under_ci():
        raise pytest.UsageError("CI is set but torch_xla is not installed: pip install -e '.[xla]'")
    skip = pytest.mark.skip(reason="torch_xla not installed: pip install -e '.[xla]'")
    for item in executed:
        item.add_marker(skip)
