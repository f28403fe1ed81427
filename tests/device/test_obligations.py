"""The device obligations across the files of a project (XLA112: the device a model goes to
comes from a function of another module), run as `xla-codemod lint FOLDER` runs them, for both
targets; and what a single-file run says of the same code."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import FileReport
from codemods.files import discover
from codemods.rules import RuleSelection
from codemods.runner import Job, run
from codemods.targets import TARGETS
from tests.support.rule_cases import RUN_CASES

_DEVICE_RUNS = [case for case in RUN_CASES if case[0].startswith("XLA")]


def lint_folder(folder: Path, target: str) -> list[FileReport]:
    job = Job("lint", target, RuleSelection())
    return run([(str(path), job) for path in discover((str(folder),))])


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("rule,kind,files", _DEVICE_RUNS, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(_DEVICE_RUNS)])
def test_run_case(
    rule: str, kind: str, files: dict[str, str], target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # findings name files relative to the current folder
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    reports = lint_folder(tmp_path, target)
    assert not any(r.error for r in reports), reports
    fired = [(r.path, f) for r in reports for f in r.findings if f.rule == rule]
    assert bool(fired) == (kind != "negative"), fired
    for path, finding in fired:  # at the move in the training script, naming the helper's file
        assert path.endswith("train.py") and (finding.line, finding.col) == (6, 13)
        assert "`pick_device()` in helpers.py, which returns" in finding.message or "`pd()` in helpers.py" in finding.message


def test_a_single_file_run_says_the_device_comes_from_a_module_it_does_not_read() -> None:
    source = dict(next(files for rule, kind, files in _DEVICE_RUNS if kind == "positive"))["train.py"]
    conversion = convert_source(textwrap.dedent(source).lstrip("\n"))
    messages = [f.message for f in conversion.findings if f.rule == "XLA003"]
    assert messages == [
        "the device comes from `pick_device` in another module of the project that this run does not read: "
        "run the tool on the project folder to follow it, and check it returns the XLA device"
    ]
