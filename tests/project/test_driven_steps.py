"""Steps driven across the files of a run (XLA306): a loop that the port gives the step
barrier drives the steps it runs, through a subclass's override of a method it calls on
``self``, through a helper of a base class of another module that a subclass method calls on
``self``, and through an optimizer wrapper handed back by a project function; a step that
nothing calls still gets XLA306."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import converted_project as convert_project

_BASE = """import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model.cuda()
        self.optimizer = optimizer

    def train_iteration(self, n):
        for _ in range(n):
            self.train_step()

    def train_step(self):
        self.optimizer.zero_grad()
        self.model(torch.randn(8, 4).cuda()).sum().backward()
        self.optimizer.step()
"""
_SEQ = """import torch

from base import Trainer


class SeqTrainer(Trainer):
    def train_step(self):
        self.optimizer.zero_grad()
        self.model(torch.randn(8, 4).cuda()).mean().backward()
        self.optimizer.step()
"""
_EXPERIMENT = """import torch
from torch import nn

from seq import SeqTrainer

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
SeqTrainer(model, optimizer).train_iteration(100)
"""
_SCHEDULED = """import torch


class ScheduledOptim:
    def __init__(self, optimizer):
        self._optimizer = optimizer
        self.steps = 0

    def step_and_update_lr(self):
        self.steps += 1
        self._optimizer.step()

    def zero_grad(self):
        self._optimizer.zero_grad()
"""
_UTILS = """import torch
from torch import nn

from optimizer import ScheduledOptim


def get_model(device):
    model = nn.Linear(4, 2).to(device)
    return model, ScheduledOptim(torch.optim.Adam(model.parameters()))
"""
_TRAIN = """import torch

from utils import get_model

device = torch.device("cuda")
model, optimizer = get_model(device)
for epoch in range(10):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).sum().backward()
    optimizer.step_and_update_lr()
"""
_UNCALLED = """import torch


class Agent:
    def __init__(self, net):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters())

    def update(self, batch):
        self.optimizer.zero_grad()
        self.net(batch.cuda()).mean().backward()
        self.optimizer.step()
"""


def _undriven(folder: Path, files: dict[str, str], target: str) -> dict[str, list[str]]:
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    return {
        Path(report.path).resolve().relative_to(folder.resolve()).as_posix(): [
            f.message for f in report.findings if f.rule == "XLA306"
        ]
        for report in reports
    }


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_override_of_a_method_a_base_class_loop_calls_is_driven_by_that_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _undriven(tmp_path, {"base.py": _BASE, "seq.py": _SEQ, "experiment.py": _EXPERIMENT}, target)
    assert found == {"base.py": [], "seq.py": [], "experiment.py": []}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_override_in_the_base_class_module_is_driven_by_its_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    seq_here = _BASE + "\n\n" + _SEQ.split("\n\n\n", 1)[1]
    experiment = _EXPERIMENT.replace("from seq import", "from base import")
    found = _undriven(tmp_path, {"base.py": seq_here, "experiment.py": experiment}, target)
    assert found == {"base.py": [], "experiment.py": []}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_wrapper_handed_back_in_a_tuple_is_driven_by_the_loop_that_steps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _undriven(tmp_path, {"optimizer.py": _SCHEDULED, "utils.py": _UTILS, "train.py": _TRAIN}, target)
    assert found == {"optimizer.py": [], "utils.py": [], "train.py": []}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_wrapper_class_reexported_by_a_package_named_like_the_module_that_returns_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """utils/model.py's ``from model import ScheduledOptim`` is the package model/ (which
    re-exports it), not utils/model.py itself: a module never imports itself."""
    monkeypatch.chdir(tmp_path)
    files = {
        "model/__init__.py": "from .optimizer import ScheduledOptim\n",
        "model/optimizer.py": _SCHEDULED,
        "utils/__init__.py": "",
        "utils/model.py": _UTILS.replace("from optimizer import", "from model import"),
        "train.py": _TRAIN.replace("from utils import", "from utils.model import"),
    }
    found = _undriven(tmp_path, files, target)
    assert found == {name: [] for name in files}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_nothing_calls_still_has_no_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"base.py": _BASE, "seq.py": _SEQ, "agent.py": _UNCALLED, "experiment.py": _EXPERIMENT}
    found = _undriven(tmp_path, files, target)
    (message,) = found["agent.py"]
    assert "`self.optimizer.step()` in `Agent.update` has no step barrier" in message
    assert found["seq.py"] == [] and found["base.py"] == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_wrapper_handed_back_but_never_stepped_keeps_its_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    train = _TRAIN.replace("optimizer.step_and_update_lr()", "optimizer.zero_grad()")
    found = _undriven(tmp_path, {"optimizer.py": _SCHEDULED, "utils.py": _UTILS, "train.py": train}, target)
    (message,) = found["optimizer.py"]
    assert "in `ScheduledOptim.step_and_update_lr` has no step barrier" in message


_HELPER_BASE = """import torch


class BaseSystem:
    def __init__(self, model, loader):
        self.model = model.cuda()
        self.loader = loader
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def backward(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
"""
_HELPER_SYSTEM = """from base import BaseSystem


class System(BaseSystem):
    def step(self, batch):
        self.backward(self.model(batch.cuda()).sum())

    def fit(self):
        for batch in self.loader:
            self.step(batch)
"""
_HELPER_RUN = """import torch

from system import System

System(torch.nn.Linear(4, 2), [torch.randn(8, 4)] * 4).fit()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_base_class_helper_a_subclass_method_calls_on_self_is_driven_by_its_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """CRSLab: ``BaseSystem.backward`` steps; ``System.step`` (another module) calls
    ``self.backward(loss)``, and ``fit``'s loop (which gets the barrier) calls ``self.step``."""
    monkeypatch.chdir(tmp_path)
    files = {"base.py": _HELPER_BASE, "system.py": _HELPER_SYSTEM, "run.py": _HELPER_RUN}
    found = _undriven(tmp_path, files, target)
    assert found == {name: [] for name in files}


def test_the_loop_that_calls_the_subclass_method_gets_the_barrier(tmp_path: Path) -> None:
    files = {"base.py": _HELPER_BASE, "system.py": _HELPER_SYSTEM, "run.py": _HELPER_RUN}
    converted = convert_project(tmp_path, "proj", files)
    assert "            self.step(batch)\n            torch_xla.sync()\n" in (converted / "system.py").read_text()
    assert "sync()" not in (converted / "base.py").read_text()


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    ("fit", "call"),
    [
        ("", ""),  # no loop at all, the instance only built
        ("\n    def fit(self):\n        for batch in self.loader:\n            self.model(batch)\n", ".fit()"),
    ],
)
def test_a_subclass_method_that_calls_a_base_class_step_and_that_no_loop_calls_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, fit: str, call: str
) -> None:
    monkeypatch.chdir(tmp_path)
    system = _HELPER_SYSTEM.split("\n    def fit", 1)[0] + "\n" + fit
    run_once = _HELPER_RUN.replace(".fit()", call)
    files = {"base.py": _HELPER_BASE, "system.py": system, "run.py": run_once}
    found = _undriven(tmp_path, files, target)
    (message,) = found["system.py"]
    assert "in `System.step`, which runs the optimizer step of `BaseSystem.backward` (base.py)" in message
    assert found["base.py"] == []
