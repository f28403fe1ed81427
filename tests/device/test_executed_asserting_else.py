"""Executed: a model builder checks `torch.cuda.is_available()` and, without CUDA, only asserts a
configuration without GPUs (`else: assert NUM_GPUS == 0`), then moves the model `if NUM_GPUS:`
(SlowFast's `build_model`). On an XLA host the check is False and, with the default configuration
(one GPU), the assert fails before training. The port drops the check with that branch (XLA104):
the converted script trains like the original in eager mode (same losses, XLA parameters stepped,
no new graph after the warm-up), on torch_xla 2.9 (CPU), with the checks of tests/support/executed.py.

Negative control: converted with XLA104 off, the check stays and the script stops at the assert."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project
from tests.support.training_programs import batches_loop

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import torch
import torch.nn as nn

NUM_GPUS = 1


def build_model():
    if torch.cuda.is_available():
        print("building on", NUM_GPUS, "GPUs")
    else:
        assert NUM_GPUS == 0, "CUDA is not available: set NUM_GPUS to 0"
    model = nn.Linear(4, 2)
    if NUM_GPUS:
        model = model.cuda()
    return model


def main():
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""" + batches_loop("        if NUM_GPUS:\n            x, y = x.cuda(), y.cuda()\n")


def test_the_check_goes_with_its_asserting_branch_and_the_model_trains_on_xla(tmp_path: Path) -> None:
    # The original's reference run is on the CPU, as its configuration for a host without GPUs.
    eager_folder = write_project(
        tmp_path / "eager", "asserting", {"train.py": TRAIN.replace("NUM_GPUS = 1", "NUM_GPUS = 0")}
    )
    eager = run_script(eager_folder, "train.py", on_xla=False)
    folder = converted_project(tmp_path / "ported", "asserting", {"train.py": TRAIN})
    ported = (folder / "train.py").read_text()
    assert "is_available" not in ported and "assert NUM_GPUS == 0" not in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_check_kept_the_assert_stops_the_script_on_xla(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "kept", "asserting", {"train.py": TRAIN}, RuleSelection(ignore=("XLA104",)))
    assert "torch.cuda.is_available()" in (folder / "train.py").read_text()
    run = run_script(folder, "train.py", check=False)
    assert run.returncode != 0
    assert "CUDA is not available: set NUM_GPUS to 0" in run.stderr
    assert "step 0 loss" not in run.output
