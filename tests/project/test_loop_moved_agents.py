"""An agent class of another module that builds its optimizers in ``__init__`` over modules handed in
and moves them later through a loop over a property listing them (``for m in self.modules: m.to(device)``,
an RL agent's ``torch_to_device``), driven by a script's loop: a whole-project run reports the optimizer
(XLA203) in the agent's module; a run on the script alone names that module (XLA003: its optimizer steps
the CPU copies the move replaced, which no step barrier of the script's loop mends), while an agent whose
methods only take a plain step over modules moved before the optimizer gets no finding there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

_AGENT = """import torch


class Agent(object):
    def __init__(self, policy, qf):
        self.policy = policy
        self.qf = qf
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def train(self, x):
        loss = self.policy(x).sum() + self.qf(x).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def to_device(self, device):
        for module in self.modules:
            module.to(device)

    @property
    def modules(self):
        modules = [self.policy]
        modules.append(self.qf)
        return modules
"""

_MAIN = """import torch

from .agent import Agent


def main(loader, device="cuda"):
    agent = Agent({policy}, torch.nn.Linear(3, 1))
    agent.to_device(device)
    for x in loader:
        agent.train(x.to(device))
"""


def _write(folder: Path, policy: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(folder)  # the findings name the other modules by their paths from here
    files = {"sac/__init__.py": "", "sac/agent.py": _AGENT, "sac/main.py": _MAIN.format(policy=policy)}
    write_project(folder, "proj", files)
    return list(files)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_whole_project_reports_the_optimizer_the_loop_strands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    names = _write(tmp_path, "torch.nn.Linear(3, 1)", monkeypatch)
    found = unfixed_findings(tmp_path, names, target)
    stranded = [(line, message) for rule, line, message in found["agent.py"] if rule == "XLA203"]
    assert len(stranded) == 1 and stranded[0][0] in (8, 9, 10)  # ``self.policy.parameters()``, imports added
    assert stranded[0][1].startswith(
        "the optimizer is built while `policy`, handed in, may be on the CPU, and `module.to(device)` in "
        "`Agent.to_device` moves the model later"
    )
    assert not [f for f in found["main.py"] if f[0] == "XLA003"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_script_alone_names_the_agents_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    _write(tmp_path, "torch.nn.Linear(3, 1)", monkeypatch)
    found = unfixed_findings(tmp_path, ["sac/main.py"], target)
    named = [(line, message) for rule, line, message in found["main.py"] if rule == "XLA003"]
    assert [line for line, _ in named] == [named[0][0]] and named[0][0] in (3, 4, 5)  # the import
    message = named[0][1]
    assert message.startswith(
        "what this file uses of sac/agent.py, which this run does not convert, holds an optimizer built over "
        "parameters that a later move to the device replaces (`Agent` has `self.policy.parameters()` (line 8))"
    )
    assert "the optimizer steps the old CPU copies and the model trains nothing" in message


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_plain_step_over_modules_the_agent_does_not_move_names_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """Control: the agent's step alone (its loop gets the barrier here, one process) is right on XLA."""
    monkeypatch.chdir(tmp_path)
    agent = _AGENT.replace("        modules.append(self.qf)\n", "").replace("[self.policy]", "[self.qf]")
    files = {"sac/__init__.py": "", "sac/agent.py": agent, "sac/main.py": _MAIN.format(policy="torch.nn.Linear(3, 1)")}
    write_project(tmp_path, "proj", files)
    found = unfixed_findings(tmp_path, ["sac/main.py"], target)
    assert not [f for f in found["main.py"] if f[0] == "XLA003"]
    whole = unfixed_findings(tmp_path, list(files), target)
    assert not [f for f in whole["agent.py"] if f[0] in ("XLA203", "XLA213")]
