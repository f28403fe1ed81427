"""A rollout sampler of another module that takes the policy to the CPU and back through a
helper of its module (``move_all(torch.device("cpu"), self.policy)``, then
``move_all(self.device, self.policy)``, with ``def move_all(device, *modules)``), built after
the optimizer over that policy: on XLA each move replaces the module's Parameter objects and
the optimizer keeps stepping the old ones.  XLA203 reports the construction that hands the
policy over, in a run on the project and in a single-file run of the script; a sampler that
runs a CPU copy of the policy gets nothing.  Executed: converted, the policy stops training,
as the finding says; with the CPU copy the finding suggests, it trains."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, convert_folder, run_command, run_environment
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

HELPERS = """\
import torch


def move_all(device, *modules):
    return [m.to(device) for m in modules]


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        move_all(torch.device("cpu"), self.policy)
        with torch.no_grad():
            obs = torch.randn(n, 4)
            self.policy(obs)
        move_all(self.device, self.policy)
        return obs
"""
# What the finding suggests: run a CPU copy, leave the module where the optimizer holds it.
HELPERS_CPU_COPY = """\
import copy

import torch


class Sampler:
    def __init__(self, policy, device):
        self.policy = policy
        self.device = device

    def collect(self, n):
        cpu_policy = copy.deepcopy(self.policy).cpu()
        with torch.no_grad():
            obs = torch.randn(n, 4)
            cpu_policy(obs)
        return obs
"""
TRAIN = """\
import torch
import torch.nn as nn
from helpers import Sampler

device = torch.device("cuda", index=0) if torch.cuda.is_available() else torch.device("cpu")
torch.manual_seed(0)
policy = nn.Linear(4, 2)
policy.to(device)
optimizer = torch.optim.Adam(policy.parameters(), lr=0.1)
sampler = Sampler(policy, device)
w0 = policy.weight.detach().cpu().clone()
for it in range(3):
    obs = sampler.collect(16).to(device)
    for k in range(4):
        optimizer.zero_grad()
        loss = policy(obs).pow(2).mean()
        loss.backward()
        optimizer.step()
print(f"policy {policy.weight.device.type} trains: {not torch.equal(w0, policy.weight.detach().cpu())}")
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["helpers.py", "train.py"], ["train.py"]], ids=["project", "single-file"])
def test_a_sampler_that_moves_the_policy_to_the_cpu_and_back_is_reported_where_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "rollouts", {"helpers.py": HELPERS, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, names, target)
    assert found.get("helpers.py", []) == []
    (message,) = [message for rule, line, message in found["train.py"] if (rule, line) == ("XLA203", 10)]
    assert message.startswith("`Sampler(policy, device)` hands `policy`, whose parameters `optimizer` steps, to")
    assert "to `Sampler`, which moves it off the XLA device and back (in its methods, for a class)" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_sampler_that_runs_a_cpu_copy_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "rollouts", {"helpers.py": HELPERS_CPU_COPY, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, ["helpers.py", "train.py"], target)
    assert [rule for rule, _, _ in found["train.py"] + found["helpers.py"] if rule == "XLA203"] == []


def _trains(folder: Path, helpers: str) -> str:
    write_project(folder, "rollouts", {"helpers.py": helpers, "train.py": TRAIN})
    eager = run_command([sys.executable, "train.py"], folder, run_environment())
    assert "policy cpu trains: True" in eager
    convert_folder(folder)
    return run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))


@pytest.mark.executed
def test_the_policy_moved_by_the_sampler_stops_training_on_xla_as_xla203_says(tmp_path: Path) -> None:
    output = _trains(tmp_path / "trip", HELPERS)
    assert "policy xla trains: False" in output


@pytest.mark.executed
def test_sampling_with_a_cpu_copy_as_the_finding_says_keeps_it_training(tmp_path: Path) -> None:
    """The negative control: the sampler the finding suggests, the same loop, trains on XLA."""
    output = _trains(tmp_path / "copy", HELPERS_CPU_COPY)
    assert "policy xla trains: True" in output
