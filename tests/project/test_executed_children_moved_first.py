"""Executed: a trainer module whose ``__init__`` takes its optimizer over a model handed to it
(issue 32, simple-faster-rcnn's ``self.optimizer = self.net.get_optimizer()``, and the direct
``SGD(self.net.parameters())``), moved after it is built.  When the caller moved the model to
the device before building the trainer, the optimizer holds the moved parameters, and moving the
trainer keeps them (a Parameter already on the device is not replaced): XLA203 says nothing and
the converted project trains on XLA.  The negative control, the model moved only with the
trainer, is reported by XLA203 and trains nothing, as the finding says."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import convert_folder, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

NETS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def get_optimizer(self):
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return self.optimizer


class Trainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = self.net.get_optimizer()

    def train_step(self, x):
        self.optimizer.zero_grad()
        self.net(x).pow(2).mean().backward()
        self.optimizer.step()


class DirectTrainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def train_step(self, x):
        self.optimizer.zero_grad()
        self.net(x).pow(2).mean().backward()
        self.optimizer.step()
"""

MAIN = """\
import torch

import nets


def train(name, trainer):
    before = trainer.net.fc.weight.detach().cpu().clone()
    for step in range(4):
        trainer.train_step(torch.randn(8, 4).cuda())
    changed = not torch.equal(before, trainer.net.fc.weight.detach().cpu())
    print(f"{{name}} {{trainer.net.fc.weight.device.type}} changed {{changed}}")


def main():
    torch.manual_seed(0)
    {build}
    train("Trainer", trainer)
    train("DirectTrainer", direct)


if __name__ == "__main__":
    main()
"""

MOVED_FIRST = """net = nets.Net().cuda()
    trainer = nets.Trainer(net).cuda()
    other = nets.Net()
    other.cuda()
    direct = nets.DirectTrainer(other).cuda()"""
MOVED_WITH_THE_TRAINER = """net = nets.Net()
    trainer = nets.Trainer(net).cuda()
    other = nets.Net()
    direct = nets.DirectTrainer(other).cuda()"""


def _project(folder: Path, build: str) -> list[str]:
    """The project written and converted; the XLA203 findings of its conversion."""
    write_project(folder, "children", {"nets.py": NETS, "main.py": MAIN.format(build=build)})
    job = Job("check", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in ("main.py", "nets.py")], workers=1)
    findings = [f"{f.line}: {f.message}" for r in reports for f in r.findings if f.rule == "XLA203"]
    convert_folder(folder)
    return findings


def test_a_trainer_built_over_a_model_moved_first_trains_on_xla_with_no_xla203(tmp_path: Path) -> None:
    folder = tmp_path / "first"
    assert _project(folder, MOVED_FIRST) == []
    output = run_script(folder, "main.py").output
    assert "Trainer xla changed True" in output and "DirectTrainer xla changed True" in output, output


def test_a_model_moved_only_with_the_trainer_trains_nothing_as_xla203_says(tmp_path: Path) -> None:
    folder = tmp_path / "with"
    findings = _project(folder, MOVED_WITH_THE_TRAINER)
    assert [finding.split(" moves ")[0] for finding in findings] == [
        "17: `nets.Trainer(net).cuda()`",
        "19: `nets.DirectTrainer(other).cuda()`",
    ], findings
    output = run_script(folder, "main.py").output
    assert "Trainer xla changed False" in output and "DirectTrainer xla changed False" in output, output
