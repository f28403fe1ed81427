"""Errors kept on the second run: a user converts, then lints (a pre-commit hook, CI) the converted
tree; an error whose cause is still there must still be reported, by the same rule at the same line.

XLA306 (an optimizer step no loop of the run drives): the port writes ``xm.optimizer_step(opt)`` and
imports torch_xla, and the second run used to read both as a hand port whose driver is elsewhere (held
out list 23: efficientvit's ``Trainer.after_step``, mbrl-lib's ``Model.update``, QueryInst's optimizer
hook).  The driving loop is still CUDA code with no barrier when no other file of the project names
torch_xla; a project that does (its driver ported by hand) keeps the step unreported."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

# A trainer whose step runs in a hook method; the loop that calls the hook is in another module.
_BASE = """import torch


class Trainer:
    def __init__(self, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def run_step(self, x):
        self.model(x.cuda()).sum().backward()

    def after_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
"""

# The loop that drives it, in a module the single-file run does not convert (still CUDA).
_CLS_TRAINER = """import torch

from base import Trainer


class ClsTrainer(Trainer):
    def train_one_epoch(self, loader):
        for x in loader:
            self.run_step(x)
            self.after_step()
"""

# The same loop, ported by hand (its barrier written).
_CLS_TRAINER_XLA = """import torch
import torch_xla

from base import Trainer


class ClsTrainer(Trainer):
    def train_one_epoch(self, loader):
        for x in loader:
            self.run_step(x)
            self.after_step()
            torch_xla.sync()
"""

# A model whose ``update`` steps an optimizer it is handed, and a trainer whose loop calls it (whole run).
_MODEL = """import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 2).cuda()

    def update(self, batch, optimizer):
        optimizer.zero_grad()
        self.net(batch.cuda()).sum().backward()
        optimizer.step()
        return 0.0
"""
_MODEL_TRAINER = """import torch


class ModelTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters())

    def train(self, data):
        for batch in data:
            self.model.update(batch, self.optimizer)
"""
_MAIN = """import torch

from model import Model
from trainer import ModelTrainer

model = Model()
ModelTrainer(model).train([torch.randn(8, 4) for _ in range(3)])
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (folder / name).write_text(text)


def _step_line(path: Path) -> int:
    """The line of the ported step in the converted file (the targets add different imports)."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if "xm.optimizer_step(" in line)


def _errors(folder: Path, names: list[str], mode: str, target: str) -> set[tuple[str, str, int]]:
    job = Job(mode, target, RuleSelection())  # type: ignore[arg-type]
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {
        (Path(report.path).name, f.rule, f.line)
        for report in reports
        for f in report.findings
        if f.severity == "error" and not f.fixed
    }


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_hook_step_whose_loop_is_in_an_unconverted_module_stays_reported_on_the_second_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"base.py": _BASE, "cls_trainer.py": _CLS_TRAINER})
    first = _errors(tmp_path, ["base.py"], "write", target)
    assert "xm.optimizer_step(self.optimizer)" in (tmp_path / "base.py").read_text()
    line = _step_line(tmp_path / "base.py")
    assert ("base.py", "XLA306", line) in first
    second = _errors(tmp_path, ["base.py"], "check", target)
    assert ("base.py", "XLA306", line) in second
    assert first == second


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_hand_ported_step_whose_project_names_torch_xla_elsewhere_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """The negative control: the driver elsewhere is ported by hand (it names torch_xla), so the
    step file alone gives no XLA306, as before."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"base.py": _BASE, "cls_trainer.py": _CLS_TRAINER_XLA})
    _errors(tmp_path, ["base.py"], "write", target)
    second = _errors(tmp_path, ["base.py"], "check", target)
    assert not any(rule == "XLA306" for _, rule, _ in second)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_on_a_handed_optimizer_stays_reported_when_the_whole_project_is_linted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"model.py": _MODEL, "trainer.py": _MODEL_TRAINER, "main.py": _MAIN}
    _write(tmp_path, files)
    first = _errors(tmp_path, list(files), "write", target)
    # (The first run does not follow ``self.model.update(...)`` in trainer.py's loop to Model.update, a
    # container method's name on a receiver it cannot tell the class of: its XLA306 names no loop.)
    assert "xm.optimizer_step(optimizer)" in (tmp_path / "model.py").read_text()
    line = _step_line(tmp_path / "model.py")
    assert ("model.py", "XLA306", line) in first
    second = _errors(tmp_path, list(files), "check", target)
    assert ("model.py", "XLA306", line) in second
    assert first == second
