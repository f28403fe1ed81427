"""A single-file run on a script that loads its model module by a name known only at run time
(the tenth held-out list's shapes: ``MODEL = importlib.import_module(FLAGS.model)`` with the
models' folder put on ``sys.path`` and ``--model`` defaulting to a module there;
``importlib.import_module(f"model.{model_name}")`` of a package of models, each with its own
module-level ``device`` chosen by a CUDA check): the run neither follows nor converts those
modules, whose ``.cuda()`` calls and device choices stay, so XLA003 says so at the call, naming
the module the flag's default names, or the package's modules.  Modules that hold nothing to
port, and a run on the whole project, give no such finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

BY_FLAG = """\
import argparse
import importlib
import os
import sys

import torch

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(BASE_DIR, "models"))
parser = argparse.ArgumentParser()
parser.add_argument("--model", default="detector")
FLAGS = parser.parse_args()

MODEL = importlib.import_module(FLAGS.model)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
net = MODEL.Detector().to(device)
criterion = MODEL.get_loss
optimizer = torch.optim.Adam(net.parameters())
for x in [torch.randn(8, 4)]:
    optimizer.zero_grad()
    criterion(net(x.to(device))).backward()
    optimizer.step()
"""

DETECTOR = """\
import torch


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def get_loss(out):
    target = torch.zeros(out.shape).cuda()
    return (out - target).pow(2).mean()
"""

BY_PACKAGE = """\
import importlib

import torch

model_name = "Small"
Model = getattr(importlib.import_module(f"model.{model_name}"), model_name)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
model = Model().to(device)
optimizer = torch.optim.Adam(model.parameters())
for batch in [{"title": torch.randn(8, 4)}]:
    optimizer.zero_grad()
    model(batch).sum().backward()
    optimizer.step()
"""

PACKAGE_MODEL = """\
import torch
from model.{name}.encoder import Encoder


class {name}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, batch):
        return self.encoder(batch)
"""

ENCODER = """\
import torch

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, batch):
        return self.fc(batch["title"].to(device))
"""

ENCODER_ON_ITS_INPUT = """\
import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, batch):
        return self.fc(batch["title"].to(self.fc.weight.device))
"""


def _findings(repo: Path, script: str, target: str, whole: bool) -> list[Finding]:
    """XLA003's findings of a run on ``script`` (the whole project with ``whole``), paths as seen from ``repo``."""
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    path = repo / script
    in_run = sorted(repo.rglob("*.py")) if whole else [path]
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=in_run)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(repo)
        conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path), locate="input")
    return [f for f in conversion.findings if f.rule == "XLA003"]


def _by_flag(repo: Path) -> Path:
    (repo / "models").mkdir(parents=True)
    (repo / "train.py").write_text(BY_FLAG)
    (repo / "models" / "detector.py").write_text(DETECTOR)
    (repo / "models" / "other.py").write_text(DETECTOR.replace(".cuda()", ""))
    return repo


def _by_package(repo: Path, encoder: str) -> Path:
    for name in ("Small", "Large"):
        (repo / "model" / name).mkdir(parents=True)
        (repo / "model" / name / "__init__.py").write_text(PACKAGE_MODEL.format(name=name))
        (repo / "model" / name / "encoder.py").write_text(encoder)
    (repo / "train.py").write_text(BY_PACKAGE)
    return repo


@pytest.mark.parametrize("target", TARGETS)
def test_a_model_module_named_by_a_flag_is_an_error_at_the_import(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(_by_flag(tmp_path / "proj"), "train.py", target, whole=False)
    assert (finding.line, finding.col) == (14, 9), finding
    assert finding.message.startswith(
        "`importlib.import_module(FLAGS.model)` loads a module of the project named at run time, `detector` by "
        "default (models/detector.py), which a run on this file neither follows nor converts: it holds "
    ), finding.message
    assert "`get_loss` in models/detector.py has `torch.zeros(out.shape).cuda()` (line 14)" in finding.message
    assert "converting the project (`xla-codemod convert .` at its root) would port it" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_model_package_named_by_an_f_string_is_an_error_at_the_import(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(_by_package(tmp_path / "proj", ENCODER), "train.py", target, whole=False)
    assert (finding.line, finding.col) == (6, 17), finding
    assert (
        '`importlib.import_module(f"model.{model_name}")` loads a module of the project named at run time, one of '
        "the modules of the `model` package: model/Large/__init__.py, model/Small/__init__.py, which a run on this "
        "file neither follows nor converts: it holds a CUDA device choice (`Encoder` in model/Large/encoder.py has "
    ) in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_modules_with_nothing_to_port_or_a_whole_run_give_nothing(tmp_path: Path, target: str) -> None:
    assert _findings(_by_package(tmp_path / "clean", ENCODER_ON_ITS_INPUT), "train.py", target, whole=False) == []
    assert _findings(_by_package(tmp_path / "whole", ENCODER), "train.py", target, whole=True) == []
    assert _findings(_by_flag(tmp_path / "flag"), "train.py", target, whole=True) == []


DETECTOR_IMPORTING_ITS_LOSS = """\
import os
import sys

import torch

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from losses import get_loss


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
"""

LOSSES = """\
import torch


def _target(out):
    return torch.zeros(out.shape).cuda()


def get_loss(out):
    return (out - _target(out)).pow(2).mean()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_what_the_loaded_module_imports_from_the_project_is_named(tmp_path: Path, target: str) -> None:
    """The loaded module's own code is clean, but ``MODEL.get_loss`` is a name it imports from a
    module beside it (the tenth list's votenet: models/loss_helper.py): that module is named."""
    repo = _by_flag(tmp_path / "proj")
    (repo / "models" / "detector.py").write_text(DETECTOR_IMPORTING_ITS_LOSS)
    (repo / "models" / "losses.py").write_text(LOSSES)
    (finding,) = _findings(repo, "train.py", target, whole=False)
    assert (finding.line, finding.col) == (14, 9), finding
    assert "`_target` in models/losses.py has `torch.zeros(out.shape).cuda()` (line 5)" in finding.message, (
        finding.message
    )
    (repo / "models" / "losses.py").write_text(LOSSES.replace(".cuda()", ""))
    assert _findings(repo, "train.py", target, whole=False) == []
    assert _findings(repo, "train.py", target, whole=True) == []
