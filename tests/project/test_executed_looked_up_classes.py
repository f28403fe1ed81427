"""Executed: an algorithm class looked up by its name in another module (``return
globals()[name]``), whose ``__init__`` builds its optimizer over its own parameters, moved to the
device after it is built. On torch_xla the move replaces the Parameter objects, so the converted
project's optimizer steps the stale CPU copies and the loss never moves: XLA203 reports the move.
The negative control rebuilds the optimizer after the move: no XLA203, and the loss falls as it
does in the eager original."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import XLA_RUNNER, convert_folder, run_command, run_environment

pytestmark = pytest.mark.executed

ALGORITHMS = """\
import torch
from torch import nn


def get_algorithm_class(name):
    return globals()[name]


class ERM(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.network = nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=lr)

    def update(self, x):
        loss = self.network(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class Mixup(ERM):
    pass
"""

TRAIN = """\
import torch

import algorithms


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    algorithm_class = algorithms.get_algorithm_class("Mixup")
    algorithm = algorithm_class(0.5)
    algorithm.to(device)
{rebuild}    x = torch.randn(16, 4).to(device)
    for step in range(5):
        print(f"step {{step}} loss {{algorithm.update(x):.6f}} on {{algorithm.network.weight.device.type}}")


if __name__ == "__main__":
    main()
"""

REBUILT = "    algorithm.optimizer = torch.optim.SGD(algorithm.network.parameters(), lr=0.5)\n"


def _project(folder: Path, rebuild: str) -> list[str]:
    """The project written; its XLA203 findings; then converted."""
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'lookups'\n")
    (folder / "algorithms.py").write_text(ALGORITHMS)
    (folder / "train.py").write_text(TRAIN.format(rebuild=rebuild))
    job = Job("check", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in ("train.py", "algorithms.py")], workers=1)
    findings = [f"{f.line}: {f.message}" for r in reports for f in r.findings if f.rule == "XLA203"]
    convert_folder(folder)
    return findings


def _losses(output: str, device: str) -> list[float]:
    return [float(v) for v in re.findall(rf"^step \d+ loss (\S+) on {device}$", output, re.MULTILINE)]


def test_a_looked_up_class_moved_after_init_trains_nothing_on_xla_as_xla203_says(tmp_path: Path) -> None:
    eager = tmp_path / "eager"
    eager.mkdir()
    (eager / "algorithms.py").write_text(ALGORITHMS)
    (eager / "train.py").write_text(TRAIN.format(rebuild=""))
    original = _losses(run_command([sys.executable, "train.py"], eager, run_environment()), "cpu")
    assert len(original) == 5 and original[-1] < original[0] * 0.9, original  # it trains on the CPU

    folder = tmp_path / "stale"
    findings = _project(folder, "")
    assert [finding.split(" moves ")[0] for finding in findings] == ["11: `algorithm.to(device)`"], findings
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    stale = _losses(output, "xla")
    assert len(stale) == 5 and len(set(stale)) == 1, output  # the stale optimizer: the loss never moves
    assert stale[0] == pytest.approx(original[0], rel=1e-4)


def test_the_optimizer_rebuilt_after_the_move_trains_on_xla_with_no_xla203(tmp_path: Path) -> None:
    folder = tmp_path / "rebuilt"
    assert _project(folder, REBUILT) == []
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    losses = _losses(output, "xla")
    assert len(losses) == 5 and losses[-1] < losses[0] * 0.9, output
