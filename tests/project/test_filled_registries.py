"""A driver loop that builds its learner from a project package's registry filled by item assignments
(``REGISTRY = {}`` then ``REGISTRY["q_learner"] = QLearner`` in ``learners/__init__.py``, pymarl's
shape) or written as a dict literal, and calls ``learner.train(batch)`` once per iteration, where
``QLearner.train`` takes the optimizer step: the learner is an instance of one of the table's
classes, so the loop drives that step and gets the barrier (XLA301), in a run on the project and in a
single-file run of the driver; the learner's module gets no XLA306.  A registry of learners that
step nothing gives the loop no barrier."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import FileReport
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]
BARRIER = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}

FILLED = """\
from .q_learner import QLearner

REGISTRY = {}

REGISTRY["q_learner"] = QLearner
"""
LITERAL = """\
from .q_learner import QLearner

REGISTRY = {"q_learner": QLearner}
"""
LEARNER = """\
import torch


class QLearner:
    def __init__(self, net, lr):
        self.net = net
        self.optimiser = torch.optim.SGD(net.parameters(), lr=lr)

    def train(self, batch):
        loss = self.net(batch).pow(2).mean()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        return loss
"""
# A learner that trains nothing (it only evaluates): its loop gets no training barrier.
IDLE_LEARNER = LEARNER.replace(
    "        self.optimiser.zero_grad()\n        loss.backward()\n        self.optimiser.step()\n", ""
)
RUN = """\
import torch

from learners import REGISTRY as le_REGISTRY


def main(name="q_learner", steps=8):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = torch.nn.Linear(4, 1).to(device)
    learner = le_REGISTRY[name](net, 0.1)
    batch = torch.randn(8, 4).to(device)
    for step in range(steps):
        loss = learner.train(batch)
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""
LOOP_LINE = 12


def files(registry: str = FILLED, learner: str = LEARNER) -> dict[str, str]:
    return {"learners/__init__.py": registry, "learners/q_learner.py": learner, "run.py": RUN}


def _reports(tmp_path: Path, target: str, project: dict[str, str], names: list[str]) -> dict[str, FileReport]:
    write_project(tmp_path, "proj", project)
    job = Job("diff", target, RuleSelection())
    return {
        r.path.removeprefix(str(tmp_path) + "/"): r for r in run([(str(tmp_path / n), job) for n in names], workers=1)
    }


@pytest.mark.parametrize("registry", [FILLED, LITERAL], ids=["filled", "literal"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_run_on_the_project_puts_the_barrier_in_the_loop_that_calls_the_learner(
    tmp_path: Path, target: str, registry: str
) -> None:
    reports = _reports(tmp_path, target, files(registry), list(files()))
    driver, learner = reports["run.py"], reports["learners/q_learner.py"]
    assert ("XLA301", LOOP_LINE, True) in [(f.rule, f.line, f.fixed) for f in driver.findings], driver.findings
    assert f"+        {BARRIER[target]}\n \n \n if __name__" in driver.diff, driver.diff
    assert not [f for f in learner.findings if f.rule == "XLA306"], learner.findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_driver_puts_the_barrier_in_its_loop(tmp_path: Path, target: str) -> None:
    reports = _reports(tmp_path, target, files(), ["run.py"])
    driver = reports["run.py"]
    assert ("XLA301", LOOP_LINE, True) in [(f.rule, f.line, f.fixed) for f in driver.findings], driver.findings
    assert not [f for f in driver.findings if f.rule == "XLA003" and "optimiser.step()" in f.message]


@pytest.mark.parametrize("target", TARGETS)
def test_a_registry_of_learners_that_step_nothing_gives_the_loop_no_barrier(tmp_path: Path, target: str) -> None:
    reports = _reports(tmp_path, target, files(learner=IDLE_LEARNER), list(files()))
    driver = reports["run.py"]
    assert not [f for f in driver.findings if f.rule == "XLA301"], driver.findings
