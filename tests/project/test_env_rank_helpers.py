"""A torchrun-style script whose rank and world size come from a project helper that reads
RANK/WORLD_SIZE (``world()`` in another module, a ``'WORLD_SIZE' in os.environ`` check left
there): once the main guard is started by torch_xla.launch, which sets none of those variables,
every process takes rank 0 of a world of 1.  XLA603's finding on the main guard names the helper,
in a single-file run (the helper not converted) and in a whole run (converted: the reads stay)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

DIST = """\
import os


def world():
    rank, world_size = 0, 1
    for v in ("SLURM_PROCID", "RANK"):
        if v in os.environ:
            rank = int(os.environ[v])
    if "WORLD_SIZE" in os.environ:
        world_size = int(os.environ["WORLD_SIZE"])
    return rank, world_size


def using_distributed():
    return "WORLD_SIZE" in os.environ


def setup():
    if using_distributed():
        return world()
    return 0, 1
"""

MAIN = """\
import torch
import torch.distributed as dist

from dist_utils import {name}


def main():
    rank, world_size = {name}()
    if world_size > 1:
        dist.init_process_group("nccl")
    model = torch.nn.Linear(2, 2).cuda()


if __name__ == "__main__":
    main()
"""

# What the finding says of each helper: the variables it reads (through what it calls).
READS = {
    "world": "`world` (dist_utils.py) reads RANK, WORLD_SIZE",
    "setup": "`setup` (dist_utils.py) reads WORLD_SIZE through `using_distributed`",
}
ADVICE = {
    "2.9": "Take the rank from xr.global_ordinal(), the local rank from xr.local_ordinal() and the world size "
    "from xr.world_size() there",
    "sagemaker": "Take the rank from xm.get_ordinal(), the local rank from xm.get_local_ordinal() and the world "
    "size from xm.xrt_world_size() there",
}


def _repo(tmp_path: Path, name: str, helper: str = DIST) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'repo'\n")
    (repo / "dist_utils.py").write_text(helper)
    (repo / "train.py").write_text(MAIN.format(name=name))
    return repo


def _launch_findings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule == "XLA603" and "main guard's code" in f.message]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["world", "setup"])
def test_a_single_file_run_names_the_helper_that_reads_the_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, name: str
) -> None:
    repo = _repo(tmp_path, name)
    monkeypatch.chdir(repo)
    script = repo / "train.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[script])
    first = convert_source(script.read_bytes(), target=target, imports=project.imports_of(script))
    [finding] = _launch_findings(first.findings)
    assert (
        finding.severity == "error" and finding.line == {"2.9": 15, "sagemaker": 20}[target]
    )  # (the main guard, in the output)
    assert f"does not set ({READS[name]}): every process gets rank 0 of a world of 1" in finding.message
    assert ADVICE[target] in finding.message
    # A second run changes nothing more.
    assert isinstance(first.output, bytes)
    assert convert_source(first.output, target=target, imports=project.imports_of(script)).output == first.output


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_names_the_helper_whose_reads_stay_once_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    from codemods.runner import Job, run

    repo = _repo(tmp_path, "setup")
    monkeypatch.chdir(repo)
    job = Job("check", target, RuleSelection())
    findings = {
        Path(r.path).name: r.findings for r in run([(str(repo / n), job) for n in ("train.py", "dist_utils.py")])
    }
    [finding] = _launch_findings(findings["train.py"])
    assert READS["setup"] in finding.message
    assert not _launch_findings(findings["dist_utils.py"])


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_reads_the_xla_runtime_gives_no_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    helper = "import torch_xla.runtime as xr\n\n\ndef world():\n    return xr.global_ordinal(), xr.world_size()\n"
    repo = _repo(tmp_path, "world", helper)
    monkeypatch.chdir(repo)
    script = repo / "train.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[script])
    [finding] = _launch_findings(
        convert_source(script.read_bytes(), target=target, imports=project.imports_of(script)).findings
    )
    assert "does not set" not in finding.message
