"""``obj.cuda()`` on an instance of a project class of another module that defines its own ``cuda``
and is no torch module or tensor (CMC's ``AliasMethod`` in NCEAverage.py, held-out list 17): the
instance has no ``.to``, so XLA102 leaves the call and the other module's ``cuda`` body is ported
in the same run; in a run that does not convert that module the call is an error naming the
method.  An object whose class the tool cannot tell (a parameter) is still moved as a module."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding, Mode
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

SAMPLER = """\
import torch


class AliasMethod(object):
    def __init__(self, probs):
        self.prob = probs

    def cuda(self):
        self.prob = self.prob.cuda()

    def draw(self, n):
        return torch.multinomial(self.prob, n, replacement=True)
"""

MEMORY = """\
import torch
from torch import nn

from sampler import AliasMethod


class Memory(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.multinomial = AliasMethod(torch.ones(size))
        self.multinomial.cuda()


def move(sampler):
    sampler.cuda()
"""


def _write(folder: Path) -> None:
    (folder / "sampler.py").write_text(SAMPLER)
    (folder / "memory.py").write_text(MEMORY)


def _findings(folder: Path, names: list[str], target: str, mode: Mode = "check") -> dict[str, list[Finding]]:
    job = Job(mode, target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).name: [f for f in r.findings if f.rule == "XLA102"] for r in reports}


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_leaves_the_call_and_ports_the_methods_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    found = _findings(tmp_path, ["sampler.py", "memory.py"], target, mode="write")
    # (lines of the output) self.prob.cuda() of AliasMethod.cuda; in memory.py the parameter's: its class is not known
    assert [(f.line, f.fixed) for f in found["sampler.py"]] == [(10, True)]
    assert [(f.line, f.fixed) for f in found["memory.py"]] == [(16, True)]
    converted = (tmp_path / "memory.py").read_text()
    assert "        self.multinomial.cuda()\n" in converted
    device = "torch_xla.device()" if target == "2.9" else "xm.xla_device()"
    assert f"sampler.to({device})" in converted
    assert f"self.prob = self.prob.to({device})" in (tmp_path / "sampler.py").read_text()
    again = _findings(tmp_path, ["sampler.py", "memory.py"], target, mode="write")  # idempotent
    assert again == {"sampler.py": [], "memory.py": []}


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_that_does_not_convert_the_classs_module_reports_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    found = _findings(tmp_path, ["memory.py"], target)["memory.py"]
    assert [(f.line, f.col, f.fixed) for f in found] == [(11, 9, False), (15, 5, True)]
    assert found[0].severity == "error"
    assert found[0].message == (
        "`self.multinomial.cuda()` runs `AliasMethod.cuda()` of sampler.py, which this run does not convert: it "
        "moves the instance's state to CUDA and fails without it (`AliasMethod` is no module or tensor: it has no "
        "`.to`); convert sampler.py too, and its `.cuda()` calls become moves to the XLA device"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_subclass_of_the_project_is_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sampler.py").write_text(
        SAMPLER.replace("class AliasMethod(object):", "class AliasMethod(torch.nn.Module):")
    )
    (tmp_path / "memory.py").write_text(MEMORY)
    found = _findings(tmp_path, ["memory.py"], target)["memory.py"]
    assert [(f.line, f.fixed) for f in found] == [(11, True), (15, True)]
