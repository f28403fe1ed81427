"""A CUDA device literal in a function that no code of the project calls (the tenth held-out
list's LAVIS: a runner-config validator with ``choices=["cpu", "cuda"]``, whose only caller's
call is commented out) is rewritten as XLA101 rewrites it, but reported as XLA120's info: it
never runs. A call from another module, a registry's decorator, a method a framework may call
(a class with a base), a call at module level keep XLA101's error, and so does a public function
that nothing names at all (a library's API, which its users call)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from codemods.cli import main
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

CONFIG = """\
import argparse

import torch


class Config:
    def __init__(self, options):
        self.options = options
        # self._validate(options)

    def _validate(self, options):
        return make_validator().parse_args(options)


def make_validator():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["cpu", "cuda"])
    return parser


def _default_device():
    return torch.device("cuda")
"""

TRAIN = """\
import torch
from config import Config

cfg = Config([])
model = torch.nn.Linear(4, 2)
"""


def _findings(folder: Path, target: str) -> dict[str, list[tuple[str, int, bool]]]:
    job = Job("lint", target, RuleSelection())
    reports = run([(str(path), job) for path in discover((str(folder),))], workers=1)
    return {
        Path(r.path).name: [(f.rule, f.line, f.fixed) for f in r.findings if f.rule in ("XLA101", "XLA120")]
        for r in reports
    }


@pytest.mark.parametrize("target", TARGETS)
def test_device_literals_nothing_calls_are_info(tmp_path: Path, target: str) -> None:
    repo = write_project(tmp_path / "proj", "proj", {"config.py": CONFIG, "train.py": TRAIN})
    found = _findings(repo, target)
    assert found["config.py"] == [("XLA120", 17, True), ("XLA120", 22, True)], found
    result = CliRunner().invoke(main, ["convert", "--target", target, str(repo)])
    assert "1 changed, 1 unchanged, 0 failed" in result.output, result.output
    assert 'choices=["cpu", "xla"]' in (repo / "config.py").read_text()
    assert _findings(repo, target)["config.py"] == []  # converted again: nothing left


_BASE = "class Base:\n    pass\n\n\n"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("files", "kept"),
    [
        ({"config.py": CONFIG.replace("# self._validate", "self._validate")}, "choices"),
        (
            {"config.py": CONFIG, "eval.py": "from config import _default_device\n\ndevice = _default_device()\n"},
            "torch.device",
        ),
        ({"config.py": CONFIG, "run.sh": "python -c 'import config; config.make_validator()'\n"}, "choices"),
        (
            {"config.py": CONFIG.replace("def _default_device", "@registry.register\ndef _default_device")},
            "torch.device",
        ),
        ({"config.py": _BASE + CONFIG.replace("class Config:", "class Config(Base):")}, "choices"),
        ({"config.py": CONFIG + "\nDEVICES = {'default': _default_device}\n"}, "torch.device"),
        ({"config.py": CONFIG + "\n\ndef local_device(): return torch.device('cuda:0')\n"}, "cuda:0"),
    ],
    ids=[
        "called-in-its-module",
        "called-from-another",
        "named-by-a-shell-script",
        "registered",
        "a-method-of-a-subclass",
        "module-level",
        "public-and-named-nowhere",
    ],
)
def test_what_code_may_call_keeps_the_error(tmp_path: Path, target: str, files: dict[str, str], kept: str) -> None:
    repo = write_project(tmp_path / "proj", "proj", {"train.py": TRAIN, **files})
    lines = (repo / "config.py").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if kept in text and "cuda" in text)
    found = _findings(repo, target)["config.py"]
    assert [rule for rule, at, _ in found if at == line] == ["XLA101"], found
