"""Executed: a device chosen by ``if torch.cuda.device_count():`` (a CUDA device count tested for
truth, SLM-Lab's ``Net.__init__``), on torch_xla 2.9 (CPU), with the checks of
tests/support/executed.py.  The count is 0 on an XLA host, so the port drops the check as it drops
``torch.cuda.is_available()`` (XLA104): the converted script trains like the original in eager mode
(same losses, the optimizer steps XLA parameters, no new graph after the warm-up).

Negative control: the converted script with the check kept, as the port used to write it (the
string ``"xla"`` in a branch that never runs), trains on the CPU: its optimizer steps CPU
parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, eager_and_converted_runs, optimizer_problems, training_problems
from tests.support.training_programs import batches_loop

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        if torch.cuda.device_count():
            self.device = "cuda:0"
        else:
            self.device = "cpu"
        self.to(self.device)


def main():
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
""" + batches_loop("        x, y = x.to(net.device), y.to(net.device)\n", "net.fc(x)")
PORTED = '        self.device = "xla"\n        self.to(self.device)\n'
KEPT = (
    "        if torch.cuda.device_count():\n"
    '            self.device = "xla"\n'
    "        else:\n"
    '            self.device = "cpu"\n'
    "        self.to(self.device)\n"
)


def test_the_count_check_goes_and_the_model_trains_on_the_xla_device(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "count", {"train.py": TRAIN}, PORTED)
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_count_check_kept_the_model_trains_on_the_cpu(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "count", {"train.py": TRAIN}, PORTED, KEPT)
    assert len(run.losses) == STEPS
    assert optimizer_problems(run) == ["the optimizers stepped parameters on cpu, not only on xla"]
