"""An Accelerate trainer whose training loop iterates the loader a method of its class returns,
built by a function of another module of the project (``return DataLoader(...)``; that module's
summary lists it in ``loader_returns``) and never prepared: nothing of Accelerate's ends its XLA
steps, so the loop gets the barrier (XLA301) and XLA807 says the loader is unprepared, in a run on
the project and on the trainer's module alone.  Where the trainer prepares what the function
returns, the loop is Accelerate's (XLA807 "nothing to port", no barrier); where the method is
defined nowhere the tool can see (an abstract method a subclass elsewhere overrides), XLA807 does
not say "nothing to port" but what to check."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

DATA = """\
from torch.utils.data import DataLoader


def make_loader(data, batch_size):
    loader = DataLoader(data, batch_size=batch_size, drop_last=True)
    return loader
"""
TRAIN = """\
import torch
from accelerate import Accelerator

from data import make_loader


class Trainer:
    def __init__(self, model, data):
        self.accelerator = Accelerator()
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.model, self.opt = self.accelerator.prepare(model, self.opt)
        self.data = data

    def create_train_dataloader(self):
        return make_loader(self.data, 4)

    def learn(self):
        for x in self.create_train_dataloader():
            loss = self.model(x.to(self.accelerator.device)).mean()
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
"""
PREPARED = TRAIN.replace(
    "return make_loader(self.data, 4)", "return self.accelerator.prepare(make_loader(self.data, 4))"
)
ABSTRACT = TRAIN.replace("return make_loader(self.data, 4)", "raise NotImplementedError")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["train.py", "data.py"], ["train.py"]])
def test_a_loop_over_a_loader_another_module_returns_gets_the_barrier(
    tmp_path: Path, target: str, names: list[str]
) -> None:
    findings = _findings(tmp_path, TRAIN, names, target)
    assert ("XLA301", 18) in {(rule, line) for rule, line, _ in findings}, findings
    assert any(rule == "XLA807" and "did not prepare" in message for rule, _, message in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_loader_the_trainer_prepares_is_left_to_accelerate(tmp_path: Path, target: str) -> None:
    findings = _findings(tmp_path, PREPARED, ["train.py", "data.py"], target)
    assert "XLA301" not in {rule for rule, _, _ in findings}, findings
    assert any(rule == "XLA807" and "nothing to port" in message for rule, _, message in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_loader_of_a_method_it_cannot_follow_is_not_called_nothing_to_port(tmp_path: Path, target: str) -> None:
    findings = _findings(tmp_path, ABSTRACT, ["train.py", "data.py"], target)
    messages = [message for rule, _, message in findings if rule == "XLA807"]
    assert messages and not any("nothing to port" in m for m in messages), findings
    assert any("cannot follow" in m for m in messages), findings


def _findings(tmp_path: Path, train: str, names: list[str], target: str) -> list[tuple[str, int, str]]:
    """Every finding (fixed or not) of a check run on ``names``: rule, line, message."""
    folder = write_project(tmp_path / "p", "p", {"train.py": train, "data.py": DATA})
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return [(f.rule, f.line, f.message) for report in reports for f in report.findings]
