"""Executed: two CUDA choices that act at a distance, ported, on torch_xla 2.9 (CPU), with the
checks of tests/support/executed.py (same losses as the original in eager mode, XLA parameters
stepped, no new graph after the warm-up).

* A CUDA default tensor type under a CUDA check (recurrent-ppo-truncated-bptt's train.py), while
  another module makes the model's inputs without a device (`torch.tensor(obs)`,
  `torch.zeros(...)`): XLA107 makes it `torch.set_default_device(torch_xla.device())` and XLA104
  drops the check.  Negative control: without the default device (the check left as it was, which
  is False on XLA) the inputs stay on the CPU and the forward on the XLA model raises.
* A flag that a CUDA check clears (pymarl's `args_sanity_check`) and that picks the device and
  guards the model's move: XLA104 removes the check.  Negative control: with the check put back,
  the converted script trains on the CPU (no graph runs on XLA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_cuda_default_tensor_type import TRAIN as DEFAULT_TYPE_TRAIN
from tests.support.executed import (
    Executed,
    converted_project,
    eager_and_converted_runs,
    run_script,
    training_problems,
)
from tests.support.training_programs import batches_loop

pytestmark = pytest.mark.executed

STEPS = 8

DEFAULT_TYPE = {
    "train.py": DEFAULT_TYPE_TRAIN,  # the script test_cuda_default_tensor_type converts
    "trainer.py": f"""\
import numpy as np
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, device):
        self.device = device
        self.rng = np.random.default_rng(0)
        self.model = nn.LSTM(4, 8).to(device)
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(torch.tensor(self.rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def run(self):
        for step in range({STEPS}):
            obs = self.rng.standard_normal((1, 16, 4)).astype(np.float32)
            cell = (torch.zeros(1, 16, 8), torch.zeros(1, 16, 8))
            out, _ = self.model(torch.tensor(obs), cell)
            loss = out.pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            print(f"step {{step}} loss {{loss.item()}}")
""",
}

CLEARED_FLAG = {
    "train.py": f"""\
from types import SimpleNamespace

import torch
import torch.nn as nn


def sanity(config):
    if config["use_cuda"] and not torch.cuda.is_available():
        config["use_cuda"] = False
        print("CUDA flag use_cuda was switched OFF")
    return config


def main():
    args = SimpleNamespace(**sanity({{"use_cuda": True}}))
    args.device = "cuda" if args.use_cuda else "cpu"
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    model = nn.Linear(4, 2)
    if args.use_cuda:
        model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + batches_loop("        x, y = x.to(args.device), y.to(args.device)\n"),
}

_DEFAULT_DEVICE = "    torch.set_default_device(torch_xla.device())\n"
_SANITY = "def sanity(config):\n    return config\n"


def test_a_cuda_default_tensor_type_becomes_the_xla_default_device_and_the_run_trains_on_xla(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "default_type", DEFAULT_TYPE, _DEFAULT_DEVICE)
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_without_the_default_device_the_inputs_stay_on_the_cpu_and_the_forward_raises(tmp_path: Path) -> None:
    script = converted_project(tmp_path, "default_type", DEFAULT_TYPE) / "train.py"
    ported = script.read_text()
    assert _DEFAULT_DEVICE in ported, ported
    left = "    if torch.cuda.is_available():\n        torch.set_default_tensor_type('torch.cuda.FloatTensor')\n"
    script.write_text(ported.replace(_DEFAULT_DEVICE, left))
    run = run_script(script.parent, "train.py", check=False)
    assert run.returncode != 0
    assert "found input tensor at cpu and parameter tensor at xla:0" in run.stderr, run.stderr[-2000:]
    assert "step 0 loss" not in run.output


def test_a_check_that_clears_the_device_flag_goes_and_the_run_trains_on_xla(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "cleared_flag", CLEARED_FLAG, _SANITY)
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_check_put_back_the_flag_is_cleared_and_the_run_stays_on_the_cpu(tmp_path: Path) -> None:
    kept = CLEARED_FLAG["train.py"].split("\n\n\n")[1] + "\n"
    assert kept.startswith("def sanity(config):\n    if config")
    _, run = eager_and_converted_runs(tmp_path, "cleared_flag", CLEARED_FLAG, _SANITY, kept)
    assert "switched OFF" in run.output
    assert any("did not run on XLA" in p for p in training_problems(run, run, Executed("train.py")))
