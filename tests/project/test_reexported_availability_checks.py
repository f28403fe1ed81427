"""CUDA-only code under a library's availability check that a project module re-exports
(LLaMA-Factory's ``from ..extras.misc import is_torch_cuda_available``, where misc.py imports it
from ``transformers.utils``): the check is False on an XLA host as ``torch.cuda.is_available()``
is, so the code it guards never runs there and gets no error (XLA506); the port leaves the check
as it is (the library's other callers read it too).  A project function of the same name that is no such re-export guards
nothing the tool can tell, and the code under it stays an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

MISC = """\
import torch
from transformers.utils import is_torch_cuda_available


def peak():
    if is_torch_cuda_available():
        return torch.cuda.max_memory_allocated()
    return 0
"""

OWN_CHECK = """\
import os


def is_torch_cuda_available():
    return os.environ.get("USE_CUDA") == "1"
"""

CALLBACKS = """\
import torch

from ..extras.misc import is_torch_cuda_available


def events():
    if is_torch_cuda_available():
        return torch.cuda.Event, torch.cuda.synchronize
    return None, None
"""

FILES = [
    "pkg/__init__.py",
    "pkg/extras/__init__.py",
    "pkg/extras/misc.py",
    "pkg/train/__init__.py",
    "pkg/train/callbacks.py",
]


def _project(folder: Path, misc: str) -> Path:
    files = {"pkg/__init__.py": "", "pkg/extras/__init__.py": "", "pkg/train/__init__.py": ""}
    return write_project(
        folder, "reexported", {**files, "pkg/extras/misc.py": misc, "pkg/train/callbacks.py": CALLBACKS}
    )


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_code_under_a_reexported_library_check_is_not_an_error(tmp_path: Path, target: str) -> None:
    found = unfixed_findings(_project(tmp_path / "p", MISC), FILES, target)
    assert not [f for f in found["callbacks.py"] if f[0] in ("XLA506", "XLA104")], found
    assert [rule for rule, _, _ in found["misc.py"]] == ["XLA503"], found  # (a note: it reads 0 there)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_code_under_a_project_function_of_that_name_stays_an_error(tmp_path: Path, target: str) -> None:
    found = unfixed_findings(_project(tmp_path / "p", OWN_CHECK), FILES, target)
    errors = [(rule, line) for rule, line, _ in found["callbacks.py"] if rule == "XLA506"]
    assert errors == [("XLA506", 8)], found
