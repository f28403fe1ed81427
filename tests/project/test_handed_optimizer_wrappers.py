"""A project's optimizer wrapper (``class Optimizer: def step(self): self.optimizer.step()``, in
its own module) handed to a trainer of another module (``Trainer(model, loader, optim=opt)``, the
trainer stepping ``self.optim.step()``): converted as one run, only the wrapper's inner step
becomes ``xm.optimizer_step`` (XLA201, fixed); the trainer's step stays as written
(``xm.optimizer_step`` on the wrapper would read its ``param_groups``, which it has not, once
several processes run), and a second run changes nothing.  Where the trainer is handed a torch
optimizer too (or converted without the file that hands it the wrapper), the receiver's class is
not proven and its step is ported as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import project_reports, write_project

OPTIMIZER = """\
import torch.optim as optim


class Optimizer:
    def __init__(self, params, lr=0.05):
        self.optimizer = optim.Adagrad(params, lr=lr)

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        self.optimizer.step()
"""

TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, loader, optim):
        self.model = model
        self.loader = loader
        self.optim = optim

    def train(self):
        for x in self.loader:
            self.optim.zero_grad()
            self.model(x).sum().backward()
            self.optim.step()
"""

TRAIN = """\
import torch

from optimizer import Optimizer
from trainer import Trainer


def main(loader):
    model = torch.nn.Linear(4, 2)
    opt = Optimizer(model.parameters(), lr=0.1)
    Trainer(model, loader, optim=opt).train()
"""

# The same run, the trainer also handed a torch optimizer (its class is then not proven).
TRAIN_BOTH = (
    TRAIN
    + """

def other(loader):
    model = torch.nn.Linear(4, 2)
    Trainer(model, loader, torch.optim.SGD(model.parameters(), lr=0.1)).train()
"""
)

FILES = {"optimizer.py": OPTIMIZER, "trainer.py": TRAINER, "train.py": TRAIN}
NAMES = ["optimizer.py", "trainer.py", "train.py"]


def _xla201(report_findings: list[Finding]) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in report_findings if f.rule == "XLA201"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_only_the_wrappers_inner_step_is_ported(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path, FILES, target, NAMES)
    assert "+        xm.optimizer_step(self.optimizer)" in reports["optimizer.py"].diff
    assert _xla201(reports["optimizer.py"].findings) == [
        (12, "self.optimizer.step() -> xm.optimizer_step(self.optimizer)")
    ]
    trainer = reports["trainer.py"]
    assert "xm.optimizer_step" not in trainer.diff and "-            self.optim.step()" not in trainer.diff
    barrier = "+            torch_xla.sync()" if target == "2.9" else "+            xm.mark_step()"
    assert barrier in trainer.diff  # the loop's barrier all the same
    assert not _xla201(trainer.findings)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_second_run_changes_nothing(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path, "proj", FILES)
    run([(str(folder / name), Job("write", target, RuleSelection())) for name in NAMES], workers=1)
    assert "self.optim.step()" in (folder / "trainer.py").read_text()
    reports = project_reports(tmp_path, {}, target, NAMES)
    assert {name: r.diff for name, r in reports.items() if r.diff} == {}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_trainer_also_handed_a_torch_optimizer_keeps_the_port(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path, {**FILES, "train.py": TRAIN_BOTH}, target, NAMES)
    assert "+            xm.optimizer_step(self.optim)" in reports["trainer.py"].diff


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_trainer_converted_alone_keeps_the_port(tmp_path: Path, target: str) -> None:
    """Without the file that hands it the wrapper in the run, the class is not proven."""
    reports = project_reports(tmp_path, FILES, target, ["trainer.py"])
    assert "+            xm.optimizer_step(self.optim)" in reports["trainer.py"].diff
