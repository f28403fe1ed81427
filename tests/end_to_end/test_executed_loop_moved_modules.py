"""Executed: modules moved through a loop variable after an optimizer was built over one of them, on
torch_xla 2.9 (CPU).  A loop over a literal tuple of the script's modules (``for net in (policy, qf):
net.to(device)``): the tool moves the model first (XLA203's fix); undone, the optimizer steps the CPU
Parameters the move replaced and nothing trains.  An RL agent's ``to_device`` moving the modules handed to
its ``__init__`` through a loop over a property listing them (``for module in self.modules``), to a device
handed in: the tool reports it (XLA203, not fixed) and leaves the code, which as converted trains nothing;
with the fix the finding names (the optimizer built after the move), the losses are the original's and every
stepped parameter is on the XLA device.  The checks tell the two apart (negative controls)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import eager_and_converted_runs, loss_problems, optimizer_problems, xla_problems

pytestmark = pytest.mark.executed

STEPS = 6
TUPLE_LOOP = """\
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    policy = nn.Linear(4, 1)
    qf = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    for net in (policy, qf):
        net.to(device)
    for step in range(6):
        x = torch.randn(8, 4)
        loss = policy(x.to(device)).pow(2).mean() + qf(x.to(device)).pow(2).mean().detach()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""
TUPLE_FIXED = "    optimizer = torch.optim.SGD(policy.to(torch_xla.device()).parameters(), lr=0.1)\n"
TUPLE_UNFIXED = "    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)\n"

AGENT = """\
import torch
import torch.nn as nn


class Agent(object):
    def __init__(self, policy, qf, device):
        self.policy, self.qf = policy, qf
        self.device = device
        self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)

    @property
    def modules(self):
        modules = [self.policy]
        modules.append(self.qf)
        return modules

    def to_device(self):
        for module in self.modules:
            module.to(self.device)

    def train(self, x):
        loss = self.policy(x.to(self.device)).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = Agent(nn.Linear(4, 1), nn.Linear(4, 1), device)
    agent.to_device()
    for step in range(6):
        x = torch.randn(8, 4)
        loss = agent.train(x)
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""
AGENT_PORTED = "    agent.to_device()\n"
AGENT_FIXED = "    agent.to_device()\n    agent.optimizer = torch.optim.SGD(agent.policy.parameters(), lr=0.1)\n"


def test_the_tool_moves_the_model_first_and_it_trains(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "tuple", {"train.py": TUPLE_LOOP}, TUPLE_FIXED)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []


def test_undone_the_fix_the_optimizer_steps_stale_cpu_copies(tmp_path: Path) -> None:
    """Negative control: the optimizer over the CPU parameters the loop's move replaced."""
    eager, run = eager_and_converted_runs(tmp_path, "tuple", {"train.py": TUPLE_LOOP}, TUPLE_FIXED, TUPLE_UNFIXED)
    assert len(eager.losses) == STEPS
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []


def test_as_converted_the_agent_trains_nothing(tmp_path: Path) -> None:
    """What XLA203 reports at the agent's optimizer: the run trains nothing on XLA."""
    eager, run = eager_and_converted_runs(tmp_path, "agent", {"train.py": AGENT}, AGENT_PORTED)
    assert len(eager.losses) == STEPS
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []


def test_the_optimizer_built_after_the_move_trains(tmp_path: Path) -> None:
    """The fix the finding names: the losses are the original's, on the XLA device."""
    eager, run = eager_and_converted_runs(tmp_path, "agent", {"train.py": AGENT}, AGENT_PORTED, AGENT_FIXED)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []
