"""Held findings: a file that other files of the run import holds back what those files may
decide, with a condition (engine.report.HeldCondition) that the runner evaluates once every
file is converted (runner.release_held)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.project.module_summary import ModuleSummary
from codemods.project.run_summaries import RunSummaries
from codemods.runner import Job, run
from codemods.training.held_conditions import StandsUnlessCalled

_EMBEDDINGS = """from torch import nn


def {function}(columns, sparse=False):
    return nn.ModuleDict({{c: nn.Embedding(10, 4, sparse=sparse) for c in columns}})
"""
_CALLER = """import torch

import inputs
import tables

features = inputs.embeddings(cols, sparse=args.sparse)
lookups = tables.lookups(cols)
"""


def _findings(folder: Path, workers: int) -> dict[str, list[Finding]]:
    job = Job("check", "2.9", RuleSelection())
    work = [(str(folder / name), job) for name in ("inputs.py", "tables.py", "caller.py")]
    reports = run(work, workers=workers)
    assert all(report.held == () for report in reports)
    return {Path(report.path).name: report.findings for report in reports}


def test_held_findings_and_their_conditions_cross_process_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inputs.py and tables.py, imported by caller.py, are converted first, in a pool's
    worker processes, each holding its ``sparse=sparse`` finding; caller.py may pass True to
    inputs.py's function only: that finding stands, named after the call, and tables.py's is
    cleared. The same findings as converting in this process."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (tmp_path / "inputs.py").write_text(_EMBEDDINGS.format(function="embeddings"))
    (tmp_path / "tables.py").write_text(_EMBEDDINGS.format(function="lookups"))
    (tmp_path / "caller.py").write_text(_CALLER)
    monkeypatch.chdir(tmp_path)
    in_pool = _findings(tmp_path, workers=2)
    assert in_pool == _findings(tmp_path, workers=1)
    (error,) = [f for f in in_pool["inputs.py"] if f.rule == "XLA507"]
    assert error.message.endswith(
        "`sparse` of `embeddings` defaults to False, but `inputs.embeddings(..., sparse=args.sparse)` in caller.py "
        "may pass True: pass False on XLA"
    )
    assert not [f for f in in_pool["tables.py"] if f.rule == "XLA507"]


def test_a_condition_decides_against_the_runs_summaries_gathered_once() -> None:
    """Two steps of agent.py held, one of them driven by main.py: that one is cleared, the
    other stands; what the conditions read of the run is worked out once (the same object)."""
    driver = ModuleSummary(path="main.py", drives=frozenset({("agent.py", "Agent.update")}))
    run_ = RunSummaries([driver, ModuleSummary(path="agent.py")], file_of=lambda path: Path("/run") / path)
    finding = Finding("XLA306", 31, 9, "`self.optimizer.step()` in `Agent.update` has no step barrier", fixed=False)
    assert StandsUnlessCalled("Agent.update").standing(finding, Path("/run/agent.py"), run_) is None
    assert StandsUnlessCalled("Agent.act").standing(finding, Path("/run/agent.py"), run_) == finding
    driven = run_.gathered(StandsUnlessCalled.driven)
    assert driven == {(Path("/run/agent.py"), "Agent.update")}
    assert run_.gathered(StandsUnlessCalled.driven) is driven


_MEMORY = """import torch


def gpu_usage(device=None):
    return torch.cuda.get_device_properties(device).total_memory


def gpu_name(device=None):
    return torch.cuda.get_device_name(device)
"""
_TRAIN = """import torch

from memory import gpu_name, gpu_usage


def main(use_gpu=True):
    gpu_available = torch.cuda.is_available() and use_gpu
    if gpu_available:
        print("GPU RAM:", gpu_usage())
    print("on", gpu_name())
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cuda_only_helper_called_only_under_a_cuda_check_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """memory.py's ``gpu_usage`` is called only under ``torch.cuda.is_available()`` (False on
    XLA: it never runs there): its finding is cleared; ``gpu_name``, called unguarded, keeps its
    error. Converted alone, memory.py keeps both (no caller in sight)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (tmp_path / "memory.py").write_text(_MEMORY)
    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    job = Job("check", target, RuleSelection())
    reports = run([(str(tmp_path / name), job) for name in ("memory.py", "train.py")], workers=1)
    findings = {Path(report.path).name: report.findings for report in reports}
    assert [(f.line, f.message.split("`")[1]) for f in findings["memory.py"] if f.rule == "XLA506"] == [
        (9, "torch.cuda.get_device_name")
    ]
    (alone,) = run([(str(tmp_path / "memory.py"), job)], workers=1)
    assert sorted(f.line for f in alone.findings if f.rule == "XLA506") == [5, 9]


_TRAIN_THROUGH_WRAPPERS = """import torch

from memory import gpu_name, gpu_usage


def show_memory():
    print("GPU RAM:", gpu_usage())


def show_name():
    print("on", gpu_name())


def main(use_gpu=True):
    gpu_available = torch.cuda.is_available() and use_gpu
    if gpu_available:
        show_memory()
        show_name()
    show_name()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cuda_only_helper_called_through_a_wrapper_only_under_a_cuda_check_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``show_memory``, the only caller of ``gpu_usage``, is itself called only under the CUDA
    check: the helper never runs on XLA, its finding is cleared; ``show_name`` is called once
    unguarded too, so ``gpu_name`` keeps its error."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (tmp_path / "memory.py").write_text(_MEMORY)
    (tmp_path / "train.py").write_text(_TRAIN_THROUGH_WRAPPERS)
    monkeypatch.chdir(tmp_path)
    job = Job("check", target, RuleSelection())
    reports = run([(str(tmp_path / name), job) for name in ("memory.py", "train.py")], workers=1)
    findings = {Path(report.path).name: report.findings for report in reports}
    assert [(f.line, f.message.split("`")[1]) for f in findings["memory.py"] if f.rule == "XLA506"] == [
        (9, "torch.cuda.get_device_name")
    ]
    # A wrapper handed on as a value (a callback) may run anywhere: the helper's error stands.
    handed = _TRAIN_THROUGH_WRAPPERS.replace("    show_name()\n", "    callbacks = [show_memory]\n", 1)
    (tmp_path / "train.py").write_text(handed)
    reports = run([(str(tmp_path / name), job) for name in ("memory.py", "train.py")], workers=1)
    findings = {Path(report.path).name: report.findings for report in reports}
    assert sorted(f.line for f in findings["memory.py"] if f.rule == "XLA506") == [5, 9]
