from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def fixture_scripts() -> list[Path]:
    """Every input script under fixtures/, as paths relative to it."""
    return sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*.py") if "__pycache__" not in p.parts)


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
