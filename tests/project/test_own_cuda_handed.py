"""``.cuda()`` on instances of project classes that define their own ``cuda`` and are no torch module
(pymarl's shape, held-out list 17): the driver builds a controller from one registry filled by item
assignment (``mac = mac_REGISTRY[args.mac](args)``), hands it to a learner built from another
(``learner = le_REGISTRY[args.learner](mac, args)``), then calls ``learner.cuda()``; ``QLearner.cuda``
calls ``self.mac.cuda()`` and ``self.target_mac.cuda()`` (``self.mac = mac``, ``copy.deepcopy(mac)``),
and ``BasicMAC.cuda`` moves its agent, an nn.Module.  Neither class has ``.to``: those calls stay, and
only the modules' moves are ported (in a run on the project; a second run changes nothing).  In a
single-file run of the learner no caller is seen: its controller is moved as a module, and the
message says why; a driver that hands the learner a module gets that move too (negative control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import FileReport
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

LEARNERS = """\
from .q_learner import QLearner

REGISTRY = {}

REGISTRY["q_learner"] = QLearner
"""
CONTROLLERS = """\
REGISTRY = {}

from .basic_controller import BasicMAC

REGISTRY["basic_mac"] = BasicMAC
"""
CONTROLLER = """\
import torch


class BasicMAC:
    def __init__(self, args):
        self.agent = torch.nn.Linear(4, 2)

    def parameters(self):
        return self.agent.parameters()

    def forward(self, x):
        return self.agent(x)

    def cuda(self):
        self.agent.cuda()
"""
LEARNER = """\
import copy

import torch


class QLearner:
    def __init__(self, mac, args):
        self.mac = mac
        self.target_mac = copy.deepcopy(mac)
        self.mixer = torch.nn.Linear(2, 1)

    def cuda(self):
        self.mac.cuda()
        self.target_mac.cuda()
        self.mixer.cuda()
"""
RUN = """\
import torch

from controllers import REGISTRY as mac_REGISTRY
from learners import REGISTRY as le_REGISTRY


def run_sequential(args):
    mac = mac_REGISTRY[args.mac](args)
    learner = le_REGISTRY[args.learner](mac, args)
    if args.use_cuda:
        learner.cuda()
    return learner
"""
# The negative control: the driver hands the learner a module (its ``.cuda()`` is a module's move).
RUN_WITH_A_MODULE = RUN.replace(
    "le_REGISTRY[args.learner](mac, args)", "le_REGISTRY[args.learner](torch.nn.Linear(4, 2), args)"
)


def files(run_py: str = RUN) -> dict[str, str]:
    return {
        "learners/__init__.py": LEARNERS,
        "learners/q_learner.py": LEARNER,
        "controllers/__init__.py": CONTROLLERS,
        "controllers/basic_controller.py": CONTROLLER,
        "run.py": run_py,
    }


def _convert(folder: Path, target: str, names: list[str]) -> dict[str, FileReport]:
    job = Job("write", target, RuleSelection())
    return {r.path.removeprefix(str(folder) + "/"): r for r in run([(str(folder / n), job) for n in names], workers=1)}


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_on_the_project_keeps_the_classes_own_cuda_and_ports_the_modules(tmp_path: Path, target: str) -> None:
    project = files()
    write_project(tmp_path, "proj", project)
    _convert(tmp_path, target, list(project))
    device = DEVICE[target]
    learner = (tmp_path / "learners/q_learner.py").read_text()
    assert "        self.mac.cuda()\n        self.target_mac.cuda()\n" in learner, learner
    assert f"        self.mixer.to({device})\n" in learner, learner
    assert "        learner.cuda()\n" in (tmp_path / "run.py").read_text()
    assert f"        self.agent.to({device})\n" in (tmp_path / "controllers/basic_controller.py").read_text()
    converted = {name: (tmp_path / name).read_text() for name in project}
    again = _convert(tmp_path, target, list(project))
    assert {name: (tmp_path / name).read_text() for name in project} == converted
    assert not [f for r in again.values() for f in r.findings if f.rule == "XLA102"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_learner_moves_its_controller_and_says_why(tmp_path: Path, target: str) -> None:
    write_project(tmp_path, "proj", files())
    report = _convert(tmp_path, target, ["learners/q_learner.py"])["learners/q_learner.py"]
    found = [(f.line, f.message) for f in report.findings if f.rule == "XLA102"]
    device = DEVICE[target]
    assert found[0][0] == 14 and found[0][1].startswith(f"self.mac.cuda() -> self.mac.to({device}): `self.mac`")
    assert "the run's files are not seen to hand it only instances" in found[0][1] and "keep `.cuda()`" in found[0][1]
    assert found[2] == (16, f"self.mixer.cuda() -> self.mixer.to({device})")


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_driver_keeps_the_learners_cuda_and_names_its_module(
    tmp_path: Path, target: str
) -> None:
    write_project(tmp_path, "proj", files())
    report = _convert(tmp_path, target, ["run.py"])["run.py"]
    assert "        learner.cuda()\n" in (tmp_path / "run.py").read_text()
    found = [(f.line, f.fixed, f.message) for f in report.findings if f.rule == "XLA102"]
    assert [(line, fixed) for line, fixed, _ in found] == [(11, False)], found
    assert (
        "runs `QLearner.cuda()` of " in found[0][2] and "q_learner.py, which this run does not convert" in found[0][2]
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_driver_handing_the_learner_a_module_gets_its_move_ported(tmp_path: Path, target: str) -> None:
    project = files(RUN_WITH_A_MODULE)
    write_project(tmp_path, "proj", project)
    _convert(tmp_path, target, list(project))
    learner = (tmp_path / "learners/q_learner.py").read_text()
    device = DEVICE[target]
    assert f"        self.mac.to({device})\n        self.target_mac.to({device})\n" in learner, learner
