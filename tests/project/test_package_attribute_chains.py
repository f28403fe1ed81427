"""A script that names no torch and imports only the project's package (d3rlpy's
reproductions/offline/cql.py: ``import d3rlpy``, then ``d3rlpy.algos.CQLConfig(...).create(device=args.gpu)``
and ``cql.fit(...)``), whose class is reached through a chain of attributes over the package's
submodules (``algos/__init__.py`` re-exports it with a star import from the module that defines it),
and whose training step lives in the package (an implementation class the algorithm builds, over a
device a helper of the package makes ``"cuda:N"`` of an int).  A single-file run follows the chain as
``from pkg.algos import CQLConfig`` would be followed: an error at the import naming the step (XLA003);
a package whose chain leads to device-agnostic code gets nothing; a run on the project ports the
device and the step and reports the step with no barrier where it is (XLA306); a second run changes
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

BASE = """\
import torch


def process_device(value):
    if isinstance(value, int):
        return f"cuda:{value}"
    return "cpu:0"


class LearnableBase:
    def __init__(self, config, device):
        self._config = config
        self._device = process_device(device)
        self._impl = None
"""
ALGO_BASE = """\
import torch

from ...base import LearnableBase

__all__ = ["AlgoBase"]


class AlgoBase(LearnableBase):
    def fit(self, dataset, n_steps):
        self.create_impl()
        for step in range(n_steps):
            batch = torch.tensor(dataset.sample(), device=self._device)
            self._impl.update(batch)
"""
CQL = """\
from .base import AlgoBase
from .impl import CQLImpl

__all__ = ["CQLConfig", "CQL"]


class CQLConfig:
    def create(self, device=False):
        return CQL(self, device)


class CQL(AlgoBase):
    def create_impl(self):
        self._impl = CQLImpl(self._device)
"""
IMPL = """\
import torch


class CQLImpl:
    def __init__(self, device):
        self.net = torch.nn.Linear(4, 1).to(device)
        self.optim = torch.optim.Adam(self.net.parameters())

    def update(self, batch):
        loss = self.net(batch).sum()
        loss.backward()
        self.optim.step()
        self.optim.zero_grad()
"""
# Device-agnostic: the implementation only computes, on the device it is handed.
IMPL_AGNOSTIC = """\
import torch


class CQLImpl:
    def __init__(self, device):
        self.device = device

    def update(self, batch):
        return torch.zeros(1, device=self.device) + batch.sum()
"""
TRAIN = """\
import argparse

import {module}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int)
    args = parser.parse_args()
    cql = {chain}.CQLConfig().create(device=args.gpu)
    cql.fit(dataset, n_steps=10)


if __name__ == "__main__":
    main()
"""
FILES = [
    "pkg/__init__.py",
    "pkg/base.py",
    "pkg/algos/__init__.py",
    "pkg/algos/qlearning/__init__.py",
    "pkg/algos/qlearning/base.py",
    "pkg/algos/qlearning/cql.py",
    "pkg/algos/qlearning/impl.py",
    "scripts/train.py",
]


def _project(folder: Path, impl: str = IMPL, base: str = BASE, module: str = "pkg", chain: str = "pkg.algos") -> Path:
    (folder / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (folder / "pkg" / "algos" / "qlearning").mkdir(parents=True)
    (folder / "scripts").mkdir()
    (folder / "pkg" / "__init__.py").write_text("from . import algos, base\n")
    (folder / "pkg" / "base.py").write_text(base)
    (folder / "pkg" / "algos" / "__init__.py").write_text("from .qlearning import *\n")
    (folder / "pkg" / "algos" / "qlearning" / "__init__.py").write_text("from .base import *\nfrom .cql import *\n")
    (folder / "pkg" / "algos" / "qlearning" / "base.py").write_text(ALGO_BASE)
    (folder / "pkg" / "algos" / "qlearning" / "cql.py").write_text(CQL)
    (folder / "pkg" / "algos" / "qlearning" / "impl.py").write_text(impl)
    (folder / "scripts" / "train.py").write_text(TRAIN.format(module=module, chain=chain))
    return folder


def _findings(folder: Path, names: list[str], target: str, mode: str = "diff") -> dict[str, list[tuple[str, int, str]]]:
    job = Job(mode, target, RuleSelection())  # type: ignore[arg-type]  # (a mode of the run)
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {
        Path(report.path).relative_to(folder.resolve()).as_posix(): [
            (f.rule, f.line, f.message) for f in report.findings if f.severity != "info"
        ]
        for report in reports
    }


@pytest.mark.parametrize(
    ("module", "chain"),
    [("pkg", "pkg.algos"), ("pkg.algos", "pkg.algos"), ("pkg", "pkg.algos.qlearning.cql"), ("pkg as p", "p.algos")],
    ids=["package", "subpackage-import", "down-to-the-defining-module", "alias"],
)
@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_follows_the_chain_to_the_packages_training_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, module: str, chain: str
) -> None:
    monkeypatch.chdir(_project(tmp_path, module=module, chain=chain))
    findings = _findings(tmp_path, ["scripts/train.py"], target)["scripts/train.py"]
    assert [(rule, line) for rule, line, _ in findings] == [("XLA003", 3)], findings
    message = findings[0][2]
    assert message.startswith("what this file uses of pkg/algos/qlearning/cql.py, which this run does not convert")
    assert "`CQLImpl` in pkg/algos/qlearning/impl.py has `self.optim.step()` (line 12)" in message
    assert '`process_device` in pkg/base.py has `f"cuda:{value}"` (line 6)' in message
    assert "converting the project (`xla-codemod convert .` at its root)" in message
    assert (tmp_path / "scripts" / "train.py").read_text() == TRAIN.format(module=module, chain=chain)


@pytest.mark.parametrize("target", TARGETS)
def test_a_chain_to_device_agnostic_code_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(_project(tmp_path, IMPL_AGNOSTIC, BASE.replace('f"cuda:{value}"', "value")))
    assert _findings(tmp_path, ["scripts/train.py"], target)["scripts/train.py"] == []


def test_a_run_on_the_project_ports_the_package_and_reports_the_undriven_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path))
    findings = _findings(tmp_path, FILES, "2.9", mode="write")
    assert findings["scripts/train.py"] == []
    assert [(rule, line) for rule, line, _ in findings["pkg/base.py"]] == [("XLA101", 7)]
    assert ("XLA306", 13) in [(rule, line) for rule, line, _ in findings["pkg/algos/qlearning/impl.py"]]
    assert '"xla"' in (tmp_path / "pkg" / "base.py").read_text()
    assert "xm.optimizer_step(self.optim)" in (tmp_path / "pkg" / "algos" / "qlearning" / "impl.py").read_text()
    written = {name: (tmp_path / name).read_text() for name in FILES}
    _findings(tmp_path, FILES, "2.9", mode="write")
    assert {name: (tmp_path / name).read_text() for name in FILES} == written
