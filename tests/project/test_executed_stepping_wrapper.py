"""Executed: a project's optimizer wrapper that is no torch optimizer (``ScheduledSGD`` holds
``self._optim = torch.optim.SGD(...)`` and its own ``step()`` steps it, then sets the next
rate), stepped in a multi-process script without DDP, on torch_xla 2.9 (CPU), with the checks
of tests/support/executed.py.  The port makes the wrapper's inner step ``xm.optimizer_step``
(in its module) and leaves the call of the wrapper's own ``step()`` as it is: the converted
project trains on XLA like the original in eager mode (same losses, the optimizer steps XLA
parameters, one graph run per step, no new graph after the warm-up).

Negative control: the wrapper's call as the port used to write it,
``xm.optimizer_step(optimizer)``, fails with KeyError 'param_groups' as soon as the script
runs on two devices (``reduce_gradients`` reads the wrapper's ``param_groups``, which it has
not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import TORCHRUN_ENV, Executed, barrier_per_step_problems, converted_project, run_script
from tests.support.projects import write_project
from tests.support.training_programs import linear_steps

pytestmark = pytest.mark.executed

SCHEDULE = """\
import torch


class ScheduledSGD:
    def __init__(self, params, lr):
        self.lr = lr
        self._optim = torch.optim.SGD(params, lr=lr)

    def step(self):
        self._optim.step()
        self.lr *= 0.9
        for group in self._optim.param_groups:
            group["lr"] = self.lr

    def zero_grad(self):
        self._optim.zero_grad()
"""

STEPS = 10

TRAIN = f"""\
import torch
import torch.distributed as dist
import torch.nn as nn

import schedule


def main():
    dist.init_process_group("gloo")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{linear_steps(STEPS, "schedule.ScheduledSGD")}

if __name__ == "__main__":
    main()
"""


FILES = {"schedule.py": SCHEDULE, "train.py": TRAIN}


def test_the_wrappers_inner_step_is_ported_and_the_project_trains_on_xla(tmp_path: Path) -> None:
    eager_folder = write_project(tmp_path / "eager", "wrapped", FILES)
    eager = run_script(eager_folder, "train.py", on_xla=False, env=dict(TORCHRUN_ENV))
    folder = converted_project(tmp_path / "ported", "wrapped", FILES)
    assert "xm.optimizer_step(self._optim)" in (folder / "schedule.py").read_text()
    ported = (folder / "train.py").read_text()
    assert "        optimizer.step()\n" in ported and "xm.optimizer_step" not in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_with_the_wrapper_handed_to_optimizer_step_two_devices_fail(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "wrapper-stepped", "wrapped", FILES)
    train = folder / "train.py"
    text = train.read_text()
    assert "        optimizer.step()\n" in text
    train.write_text(
        "import torch_xla.core.xla_model as xm\n"
        + text.replace("        optimizer.step()\n", "        xm.optimizer_step(optimizer)\n")
    )
    result = run_script(folder, "train.py", runner=False, check=False, env={"CPU_NUM_DEVICES": "2"})
    assert result.returncode != 0
    assert "KeyError: 'param_groups'" in result.stderr
    assert "step 0 loss" not in result.output
