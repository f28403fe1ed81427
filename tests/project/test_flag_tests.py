"""A device flag parsed in one module (``get_args()``, ``--device`` defaulting to "cuda") and
tested in another (``assert args.device in ["cpu", "cuda"]``): a whole-project run makes the
default "xla" and the list's "cuda" with it (XLA101), so the new default passes the assert; a
run that converts only the script leaves both as they were (the default stays "cuda"), for
both targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

OPTS = """\
import argparse


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    return parser.parse_args()
"""

TRAIN = """\
import torch
from opts import get_args


def main():
    args = get_args()
    assert args.device in ["cpu", "cuda"]
    model = torch.nn.Linear(2, 2).to(torch.device(args.device))
    return model
"""


def _converted(folder: Path, target: str, names: list[str]) -> dict[str, tuple[str, list[tuple[str, int, str]]]]:
    """Each of ``names`` converted in one run that reads the folder: its text and its findings."""
    files = [folder / name for name in names]
    project = Project(folder, summarise_with(target, RuleSelection(), None), in_run=files)
    result = {}
    for path in files:
        conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
        output = conversion.output
        assert isinstance(output, bytes)
        result[path.name] = (output.decode(), [(f.rule, f.line, f.message) for f in conversion.findings])
    return result


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_ports_the_list_the_flag_is_tested_against(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "flags", {"opts.py": OPTS, "train.py": TRAIN})
    converted = _converted(folder, target, ["opts.py", "train.py"])
    assert 'default="xla"' in converted["opts.py"][0]
    text, findings = converted["train.py"]
    assert 'assert args.device in ["cpu", "xla"]' in text
    assert ("XLA101", 8, '"cuda" -> "xla" (a test of the device flag, whose default the port makes "xla" too)') in {
        (rule, line, message) for rule, line, message in findings
    }, findings
    assert not [f for f in findings if f[0] in ("XLA105", "XLA114")], findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_of_the_script_alone_leaves_the_flag_and_its_test(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "flags", {"opts.py": OPTS, "train.py": TRAIN})
    text, findings = _converted(folder, target, ["train.py"])["train.py"]
    assert 'assert args.device in ["cpu", "cuda"]' in text
    assert not [f for f in findings if f[0] == "XLA101" and "device flag" in f[2]], findings
