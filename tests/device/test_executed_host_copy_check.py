"""Executed: a helper that copies a tensor to the host only if it is on the GPU
(``def cpu(t): if t.is_cuda: return t.cpu()``, spotlight's torch_utils), called on the model's
output before ``.numpy()``.  On XLA ``is_cuda`` is False, so the tensor stays on the device and
``.numpy()`` raises.  The port asks ``t.device.type == "xla"`` (XLA117): the converted script
trains on XLA like the original's eager run and its predictions reach numpy.  The negative
control puts the author's ``is_cuda`` back: the evaluation fails with a TypeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    barrier_per_step_problems,
    converted_project,
    run_script,
)
from tests.support.projects import write_project
from tests.support.training_programs import linear_steps

pytestmark = pytest.mark.executed

STEPS = 10

UTILS = """\
import torch


def cpu(tensor):
    if tensor.is_cuda:
        return tensor.cpu()
    else:
        return tensor
"""

TRAIN = f"""\
import torch
import torch.nn as nn

from utils import cpu


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{linear_steps(STEPS)}    predictions = cpu(model(torch.ones(3, 4).to(device))).detach().numpy()
    print("predicted", predictions.shape, round(float(predictions.sum()), 3))


if __name__ == "__main__":
    main()
"""

FILES = {"train.py": TRAIN, "utils.py": UTILS}
PORTED = 'if tensor.device.type == "xla":'


def test_the_host_copy_check_is_ported_and_predictions_reach_numpy(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "host_copy", FILES), "train.py", on_xla=False)
    assert len(eager.losses) == STEPS and "predicted (3, 2)" in eager.output
    folder = converted_project(tmp_path / "ported", "host_copy", FILES)
    utils = (folder / "utils.py").read_text()
    assert PORTED in utils, utils
    run = run_script(folder, "train.py")
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS + 1)  # and the prediction
    assert not problems, problems
    want = eager.output.split("predicted", 1)[1].split()[2]
    assert f"predicted (3, 2) {want}" in run.output, run.output[-2000:]
    # The negative control: the author's check leaves the output on the XLA device.
    (folder / "utils.py").write_text(utils.replace(PORTED, "if tensor.is_cuda:"))
    failed = run_script(folder, "train.py", check=False)
    assert failed.returncode != 0 and "can't convert xla" in failed.stderr, failed.stderr[-2000:]
