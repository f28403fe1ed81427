"""Executed: a project's optimizer wrapper that is no torch optimizer (``Optimizer`` holds
``self.optimizer = torch.optim.SGD(...)`` and its own ``step()`` steps it), built by the script
and handed to a trainer of another module (``Trainer(model, optim=optimizer)``, whose loop steps
``self.optim.step()``), in a multi-process script without DDP, on torch_xla 2.9 (CPU), with the
checks of tests/support/executed.py.  The port makes only the wrapper's inner step
``xm.optimizer_step`` and leaves the trainer's call of the wrapper's ``step()`` as it is: the
converted project trains on XLA like the original in eager mode (same losses, one graph run per
step, no new graph after the warm-up).

Negative control: the trainer's call as the port used to write it, ``xm.optimizer_step(self.optim)``,
fails as soon as the script runs on two devices (``reduce_gradients`` reads the wrapper's
``param_groups``, which it has not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import TORCHRUN_ENV, Executed, barrier_per_step_problems, converted_project, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

OPTIMIZER = """\
import torch.optim as optim


class Optimizer:
    def __init__(self, params, lr=0.1):
        self.optimizer = optim.SGD(params, lr=lr)

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        self.optimizer.step()
"""

STEPS = 10

TRAINER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, device, optim):
        self.model = model
        self.device = device
        self.optim = optim

    def train(self, steps):
        for step in range(steps):
            x, y = torch.randn(8, 4), torch.randn(8, 2)
            loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            print(f"step {step} loss {loss.item()}")
"""

TRAIN = f"""\
import torch
import torch.distributed as dist
import torch.nn as nn

from optimizer import Optimizer
from trainer import Trainer


def main():
    dist.init_process_group("gloo")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
    optimizer = Optimizer(model.parameters(), lr=0.1)
    Trainer(model, device, optim=optimizer).train({STEPS})


if __name__ == "__main__":
    main()
"""

FILES = {"optimizer.py": OPTIMIZER, "trainer.py": TRAINER, "train.py": TRAIN}
KEPT = "            self.optim.step()\n"


def test_only_the_wrappers_inner_step_is_ported_and_the_project_trains_on_xla(tmp_path: Path) -> None:
    eager_folder = write_project(tmp_path / "eager", "handed", FILES)
    eager = run_script(eager_folder, "train.py", on_xla=False, env=dict(TORCHRUN_ENV))
    folder = converted_project(tmp_path / "ported", "handed", FILES)
    assert "xm.optimizer_step(self.optimizer)" in (folder / "optimizer.py").read_text()
    trainer = (folder / "trainer.py").read_text()
    assert KEPT in trainer and "xm.optimizer_step" not in trainer
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems


def test_with_the_wrapper_handed_to_optimizer_step_two_devices_fail(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "wrapper-stepped", "handed", FILES)
    trainer = folder / "trainer.py"
    text = trainer.read_text()
    assert KEPT in text
    trainer.write_text(
        "import torch_xla.core.xla_model as xm\n" + text.replace(KEPT, "            xm.optimizer_step(self.optim)\n")
    )
    result = run_script(folder, "train.py", runner=False, check=False, env={"CPU_NUM_DEVICES": "2"})
    assert result.returncode != 0
    assert "'param_groups'" in result.stderr
    assert "step 0 loss" not in result.output
