"""A single-file run on a script whose trainer comes from a module imported by a name known only
at run time (the eighth held-out list's Palette shape: ``create_model(cfg)`` in models/__init__.py
does ``importlib.import_module(cfg["which_model"][0])``): no run on that file can follow it to the
training loop, which stays on CUDA terms, so XLA003 says so at the import, when the script takes
no optimizer step itself (the script calls ``t.train()``, a name torch's modules define, which
names no project method); where the script calls the trainer's method by a name that a project
class's method which trains has (``t.train_epoch()``), XLA003 names that method at the call instead.
A run on the whole project converts the trainer and says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

FACTORY = """\
import importlib


def create_model(cfg, **kwargs):
    file_name, class_name = cfg["which_model"]
    return getattr(importlib.import_module(file_name), class_name)(**kwargs)
"""

TRAINER = """\
import torch


class Trainer:
    def __init__(self, net, loader):
        self.net = net.cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.loader = loader

    def train(self):
        self.train_epoch()

    def train_epoch(self):
        for x in self.loader:
            self.opt.zero_grad()
            self.net(x.cuda()).pow(2).mean().backward()
            self.opt.step()
"""

RUN = """\
import torch
import torch.nn as nn
from models import create_model

cfg = {{"which_model": ["models.trainer", "Trainer"]}}
net = nn.Linear(4, 2)
t = create_model(cfg, net=net, loader=[torch.randn(8, 4)])
t.{call}()
{extra}"""

OWN_STEP = """\
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
net(torch.randn(8, 4)).sum().backward()
optimizer.step()
"""


def _findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, extra: str, whole: bool, call: str = "train"
) -> list[Finding]:
    repo = tmp_path / "proj"
    (repo / "models").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (repo / "models" / "__init__.py").write_text(FACTORY)
    (repo / "models" / "trainer.py").write_text(TRAINER)
    (repo / "run.py").write_text(RUN.format(extra=extra, call=call))
    monkeypatch.chdir(repo)
    in_run = sorted(repo.rglob("*.py")) if whole else [repo / "run.py"]
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=in_run)
    conversion = convert_source(
        (repo / "run.py").read_bytes(), target=target, imports=project.imports_of(repo / "run.py")
    )
    return [f for f in conversion.findings if f.rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_imported_by_a_name_known_at_run_time_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    (finding,) = _findings(tmp_path, monkeypatch, target, "", whole=False)
    assert finding.line == 3, finding
    assert (
        "models/__init__.py, which this run does not convert, holds an import of a module named only at run time"
        in (finding.message)
    )
    assert "`create_model` has `importlib.import_module(file_name)` (line 6)" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_named_like_the_trainers_training_loop_is_an_error_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    (finding,) = _findings(tmp_path, monkeypatch, target, "", whole=False, call="train_epoch")
    assert finding.line == 8, finding
    assert (
        "`t` comes from `create_model`, which picks its class among modules it imports by a name known only at run "
        "time (`importlib.import_module(file_name)` (line 6) in models/__init__.py): no run on one file can tell which "
        "modules of models/ it loads, nor the class of `t`, and `Trainer.train_epoch` of the project, named like "
        "`t.train_epoch`, runs a training loop in models/trainer.py, which this run does not convert" in finding.message
    ), finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_script_that_steps_its_own_optimizer_or_a_whole_run_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    assert _findings(tmp_path / "own", monkeypatch, target, OWN_STEP, whole=False) == []
    assert _findings(tmp_path / "whole", monkeypatch, target, "", whole=True) == []
    assert _findings(tmp_path / "named", monkeypatch, target, "", whole=True, call="train_epoch") == []
