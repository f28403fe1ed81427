"""A single-file run whose file uses a project module written for another torch_xla release
(``xm.xrt_world_size()``, gone since torch_xla 2.7; ``xr.world_size()`` on the sagemaker target's
1.13): that module raises where it reaches the name, so the import is an XLA003 error that names
it (held-out list 19, PrefixTuning: a Trainer copy's sampler called ``xm.xrt_world_size()`` on the
default path and the single-file run's XLA003 named only its CUDA items)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

# What the target lacks, written the other release's way, and its own spelling.
OTHER_RELEASE = {
    "2.9": ("import torch_xla.core.xla_model as xm", "xm.xrt_world_size()", "xm.get_ordinal()"),
    "sagemaker": ("import torch_xla.runtime as xr", "xr.world_size()", "xr.global_ordinal()"),
}
OWN_RELEASE = {"2.9": OTHER_RELEASE["sagemaker"], "sagemaker": OTHER_RELEASE["2.9"]}
TRAINER = """\
from torch.utils.data import DistributedSampler

from file_utils import is_torch_tpu_available

if is_torch_tpu_available():
    {imports}


def get_sampler(dataset):
    return DistributedSampler(dataset, num_replicas={size}, rank={rank})
"""
TRAIN = """\
import torch

from trainer import get_sampler

sampler = get_sampler(list(range(8)))
"""
RELEASE = "torch_xla names that the target's torch_xla release does not have"


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: tuple[str, str, str], guarded: bool) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (repo / "file_utils.py").write_text("def is_torch_tpu_available():\n    return True\n")
    imports, size, rank = names
    trainer = TRAINER.format(imports=imports, size=size, rank=rank)
    if not guarded:
        trainer = trainer.replace("if is_torch_tpu_available():\n    ", "")
    (repo / "trainer.py").write_text(trainer)
    (repo / "train.py").write_text(TRAIN)
    monkeypatch.chdir(repo)
    return repo


def _findings(repo: Path, in_run: list[str], target: str) -> list[Finding]:
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / p for p in in_run])
    conversion = convert_source(
        (repo / "train.py").read_bytes(), target=target, imports=project.imports_of(repo / "train.py")
    )
    return [f for f in conversion.findings if f.rule == "XLA003"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_another_releases_names_in_a_used_module_behind_an_xla_test_are_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, OTHER_RELEASE[target], guarded=True)
    (finding,) = _findings(repo, ["train.py"], target)
    assert (finding.line, finding.col) == (3, 1)
    assert f"what this file uses of trainer.py, which this run does not convert, holds {RELEASE}" in finding.message
    size = OTHER_RELEASE[target][1]
    assert f"`get_sampler` has `{size}` (line 10)" in finding.message
    assert "it raises AttributeError or ImportError where it reaches them" in finding.message
    # (the module imports torch_xla conditionally: converting the project reports the names there)
    assert "would not port it: it reports it there as an error to fix by hand" in finding.message
    # The whole project's run names them in trainer.py itself (XLA901), not at the import.
    assert _findings(repo, ["train.py", "trainer.py"], target) == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_another_releases_names_imported_plainly_are_ported_by_the_projects_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, OTHER_RELEASE[target], guarded=False)
    (finding,) = _findings(repo, ["train.py"], target)
    assert RELEASE in finding.message and "would port it" in finding.message
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "trainer.py"])
    converted = convert_source(
        (repo / "trainer.py").read_bytes(), target=target, imports=project.imports_of(repo / "trainer.py")
    )
    assert OWN_RELEASE[target][1].encode() in converted.output


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_targets_own_names_in_a_used_module_are_no_holding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, OWN_RELEASE[target], guarded=True)
    assert _findings(repo, ["train.py"], target) == []
