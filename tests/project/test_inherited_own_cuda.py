"""``self.cuda(device)`` in a class whose base, of another module of the project, has its own ``cuda``
(TorchDrug's ``Molecule(Graph)``, held-out list 21): that method runs, and XLA102 leaves the call (as
``self.to(...)`` it would run the class's own ``to``, which calls ``self.cuda`` again, without end).
Where the run converts the base's module its ``cuda`` body moves to the XLA device; where it does
not, the call is an error naming that module."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding, Mode
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

BASE = """\
import torch


class Graph:
    def __init__(self, edge_list):
        self.edge_list = edge_list

    def cuda(self, *args, **kwargs):
        return type(self)(self.edge_list.cuda(*args, **kwargs))
"""

MOLECULE = """\
import torch

from base import Graph


class Molecule(Graph):
    def to(self, device):
        if torch.device(device).type == "cpu":
            return self
        return self.cuda(device)


class Net(torch.nn.Module):
    def to(self, device):
        return self.cuda()
"""


def _findings(folder: Path, names: list[str], target: str, mode: Mode = "check") -> dict[str, list[Finding]]:
    job = Job(mode, target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).name: [f for f in r.findings if f.rule == "XLA102"] for r in reports}


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_leaves_the_call_and_ports_the_bases_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "molecule.py").write_text(MOLECULE)
    found = _findings(tmp_path, ["base.py", "molecule.py"], target, mode="write")
    assert [(f.line, f.fixed) for f in found["base.py"]] == [(10, True)]
    # Net (a torch module with its own ``to`` and no ``cuda``): reported, not made a recursion
    assert [(f.line, f.col, f.fixed) for f in found["molecule.py"]] == [(15, 16, False)]
    assert found["molecule.py"][0].message.startswith("`self.cuda()` is in `Net.to`, the class's own `to`")
    converted = (tmp_path / "molecule.py").read_text()
    assert converted == MOLECULE
    assert f"self.edge_list.to({DEVICE[target]})" in (tmp_path / "base.py").read_text()
    again = _findings(tmp_path, ["base.py", "molecule.py"], target, mode="write")  # idempotent
    assert again["base.py"] == [] and [f.fixed for f in again["molecule.py"]] == [False]


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_that_does_not_convert_the_bases_module_reports_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "molecule.py").write_text(MOLECULE)
    found = _findings(tmp_path, ["molecule.py"], target)["molecule.py"]
    assert [(f.line, f.col, f.fixed) for f in found] == [(10, 16, False), (15, 16, False)]
    assert found[0].message == (
        "`self.cuda(device)` runs `Graph.cuda()` of base.py (a base of this class), which this run does not "
        "convert: it moves the instance's state to CUDA and fails without it; convert base.py too, and its "
        "`.cuda()` calls become moves to the XLA device"
    )
