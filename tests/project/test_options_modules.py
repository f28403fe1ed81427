"""A device read from the options another module of the project parses (issue 32, an LLM
pre-training repository): ``args = config.parse_args_with_format("base", ...)``, whose
``FORMATS = {"base": base}`` leads to ``config/base.py``'s ``--device`` flag defaulting to
"cuda:0", then ``model.to(args.device)``.  A single-file run of the training script is an
error at the read, naming the module that holds the default (a run on the project folder
ports it); the project run ports the default and says nothing of it; options whose default
is already "xla", or that hold no device at all, give nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
import argparse
import sys

import torch
import torch.nn as nn

import config


def main():
    parser = argparse.ArgumentParser()
    args = config.parse_args_with_format("base", parser, sys.argv[1:])
    model = nn.Linear(4, 2).to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        x = torch.randn(8, 4).to(args.device)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
"""
PACKAGE = """\
from . import base

FORMATS = {"base": base}


def parse_args_with_format(format, parser, args):
    return FORMATS[format].parse_args(parser, args)
"""
BASE = """\
import torch


def parse_args(parser, args):
    parser.add_argument("--device", default={default}, type=str)
    parser.add_argument("--steps", default=5, type=int)
    return parser.parse_args(args)
"""


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default: str = '"cuda:0"') -> Path:
    repo = tmp_path / "proj"
    (repo / "config").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "config" / "__init__.py").write_text(PACKAGE)
    (repo / "config" / "base.py").write_text(BASE.format(default=default))
    monkeypatch.chdir(repo)
    return repo


def _single_file(repo: Path, target: str) -> tuple[list[Finding], list[str]]:
    """The device errors of a single-file run of train.py, and the lines of its output."""
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "train.py"])
    conversion = convert_source(
        (repo / "train.py").read_text(), target=target, imports=project.imports_of(repo / "train.py")
    )
    errors = [f for f in conversion.findings if f.severity == "error" and f.rule in ("XLA003", "XLA111", "XLA112")]
    return errors, str(conversion.output).splitlines()


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_is_an_error_at_the_read_naming_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch)
    (finding,), lines = _single_file(repo, target)
    assert finding.rule == "XLA112"
    line = lines[finding.line - 1]
    assert line.strip() == "model = nn.Linear(4, 2).to(args.device)"
    assert line[finding.col - 1 :].startswith("args.device)")
    assert (
        "`args.device` comes from `config.parse_args_with_format()`, which reaches config/base.py, which this run "
        'does not convert: there `parse_args` has `"cuda:0"` (line 5)'
    ) in finding.message


@pytest.mark.parametrize("default", ['"xla"', '"cpu"', "None"])
def test_options_that_hold_no_device_choice_to_port_give_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default: str
) -> None:
    repo = _project(tmp_path, monkeypatch, default)
    assert _single_file(repo, "2.9")[0] == []


@pytest.mark.parametrize("target", TARGETS)
def test_the_project_run_ports_the_default_and_says_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch)
    job = Job("write", target, RuleSelection())
    reports = run([(str(path), job) for path in discover((str(repo),))])
    assert not any(r.error for r in reports), reports
    assert 'parser.add_argument("--device", default="xla", type=str)' in (repo / "config" / "base.py").read_text()
    assert [f for r in reports for f in r.findings if f.rule in ("XLA003", "XLA111", "XLA112")] == []
