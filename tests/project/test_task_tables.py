"""A script that builds its solver from a project module's table of classes (``TASKS[task](cfg).fit()``,
RT-DETR's tools/train.py), whose ``fit`` runs the training loop of another project module: a
single-file run of the script follows the table's values, and says (XLA003, at the import) that the
loop's step stays without the barrier, and that a run on the project converts that loop (the solver
hands ``train_one_epoch`` its optimizer: the project run ports its step), as it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import project_reports, script_findings

TARGETS = ["2.9", "sagemaker"]
BARRIER = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}

SOLVER_INIT = """\
from .solver import DetSolver

TASKS = {"detection": DetSolver}
"""
SOLVER = """\
import torch

from .engine import train_one_epoch


class DetSolver:
    def __init__(self, device):
        self.device = device

    def fit(self):
        model = torch.nn.Linear(3, 3).to(self.device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            train_one_epoch(model, [torch.randn(2, 3)], opt, self.device)
"""
ENGINE = """\
import torch


def train_one_epoch(model, loader, opt, device):
    for x in loader:
        opt.zero_grad()
        model(x.to(device)).sum().backward()
        opt.step()
"""
TRAIN = """\
import torch

from src.solver import TASKS


def main(task):
    solver = TASKS[task]("xla")
    solver.fit()


if __name__ == "__main__":
    main("detection")
"""
FILES = {
    "src/__init__.py": "",
    "src/solver/__init__.py": SOLVER_INIT,
    "src/solver/solver.py": SOLVER,
    "src/solver/engine.py": ENGINE,
    "train.py": TRAIN,
}
# The table holds a class whose methods train nothing: nothing to say.
IDLE_SOLVER = SOLVER.replace(
    "            train_one_epoch(model, [torch.randn(2, 3)], opt, self.device)\n", "            pass\n"
)


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_reached_through_a_table_of_classes_is_an_error_at_the_import(tmp_path: Path, target: str) -> None:
    found = script_findings(tmp_path, FILES, target, "XLA003")
    assert [line for line, _ in found] == [3], found
    (message,) = [message for _, message in found]
    assert "src/solver/__init__.py, which this run does not convert" in message, message
    assert "`train_one_epoch` in src/solver/engine.py has `opt.step()` (line 8)" in message, message
    assert "without the step barrier" in message and "converting the project (`xla-codemod convert .`" in message
    # as the run on the project does (test_a_run_on_the_project_ports_the_loop_the_table_reaches): the solver
    # hands `train_one_epoch` its optimizer, so its step is ported there
    assert message.endswith("root) would port it"), message


@pytest.mark.parametrize("target", TARGETS)
def test_a_table_of_classes_that_train_nothing_is_no_error(tmp_path: Path, target: str) -> None:
    assert script_findings(tmp_path, {**FILES, "src/solver/solver.py": IDLE_SOLVER}, target, "XLA003") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_on_the_project_ports_the_loop_the_table_reaches(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path, FILES, target, list(FILES))
    assert not any(f.rule == "XLA003" for f in reports["train.py"].findings)
    engine = reports["engine.py"]
    assert f"-        opt.step()\n+        xm.optimizer_step(opt)\n+        {BARRIER[target]}\n" in engine.diff
    assert sorted((f.rule, f.line, f.fixed) for f in engine.findings if f.severity == "error") == [
        ("XLA201", 8, True),
        ("XLA301", 5, True),
    ]
