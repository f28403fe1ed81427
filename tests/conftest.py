from __future__ import annotations

from pathlib import Path

from codemods.project import Project, summarise_with
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


def torch_xla_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch_xla") is not None


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked ``executed`` need torch_xla: skipped without it, except under CI,
    where a missing torch_xla is an error (they must run there)."""
    import os

    import pytest

    executed = [item for item in items if item.get_closest_marker("executed")]
    if not executed or torch_xla_installed():
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("CI is set but torch_xla is not installed: pip install -e '.[xla]'")
    skip = pytest.mark.skip(reason="torch_xla not installed: pip install -e '.[xla]'")
    for item in executed:
        item.add_marker(skip)
