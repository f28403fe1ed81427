"""The executed tests' gate (tests/conftest.py): they need torch_xla, and must run under CI."""

from __future__ import annotations

import importlib.util
import os


def torch_xla_installed() -> bool:
    return importlib.util.find_spec("torch_xla") is not None


def running_under_ci() -> bool:
    """CI is set to something other than "", "0", "false" or "no" (any case)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
