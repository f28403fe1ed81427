"""A device choice under a function of another module of the project that returns a CUDA
availability check (SLM-Lab's ``util.use_gpu``, re-exported by ``util`` from ``ml_util``: ``return
torch.cuda.is_available() and torch.cuda.device_count() > 0``): False on an XLA host, so the path
without CUDA runs and the model stays on the CPU.  The port cannot change what the helper means to
its other callers: the choice's condition is an error (XLA104) naming the helper and its module, on
both targets, while the count check under it is dropped; a helper that returns no such check gives
no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

ML_UTIL = """\
import torch


def use_gpu(spec_gpu):
    if spec_gpu in ("auto", None):
        return torch.cuda.is_available() and torch.cuda.device_count() > 0
    return spec_gpu not in ("false", False)


def wants_gpu(spec_gpu):
    return spec_gpu in ("true", True)
"""

UTIL = """\
import torch

try:
    from pkg.ml_util import use_gpu, wants_gpu
except ImportError:
    pass
"""

NET = """\
import torch
import torch.nn as nn

from pkg import util


class Net(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        if util.HELPER(spec.get("gpu")):
            if torch.cuda.device_count():
                self.device = "cuda:0"
            else:
                self.device = "cpu"
        else:
            self.device = "cpu"
        self.to(self.device)
"""

FILES = ["pkg/__init__.py", "pkg/ml_util.py", "pkg/util.py", "pkg/net.py"]


def _project(folder: Path, helper: str) -> Path:
    files = {"pkg/__init__.py": "", "pkg/ml_util.py": ML_UTIL, "pkg/util.py": UTIL}
    return write_project(folder, "wrapped", {**files, "pkg/net.py": NET.replace("HELPER", helper)})


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_device_choice_under_a_check_helper_of_another_module_is_an_error(tmp_path: Path, target: str) -> None:
    found = unfixed_findings(_project(tmp_path / "p", "use_gpu"), FILES, target)
    errors = [(rule, line, message) for rule, line, message in found["net.py"] if rule == "XLA104"]
    assert [(rule, line) for rule, line, _ in errors] == [("XLA104", 11)], found
    message = errors[0][2]
    assert '`util.use_gpu(spec.get("gpu"))` picks the device, but `use_gpu` (in ' in message
    assert "pkg/ml_util.py) returns" in message  # (the path as the run names it)
    assert "`torch.cuda.is_available() and torch.cuda.device_count() > 0`, which is False on XLA" in message
    assert "the model and tensors stay on the CPU" in message
    # the count check under it is an availability check, dropped (fixed): no XLA105 is left for it
    assert not [f for f in found["net.py"] if f[0] == "XLA105"], found


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_helper_that_returns_no_availability_check_gives_no_error(tmp_path: Path, target: str) -> None:
    found = unfixed_findings(_project(tmp_path / "p", "wants_gpu"), FILES, target)
    assert not [f for f in found["net.py"] if f[0] in ("XLA104", "XLA105")], found
