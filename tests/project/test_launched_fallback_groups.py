"""A set-up helper that starts the process group with env:// in a ``try`` and falls back to one
process in its ``except`` (distributed/fallbacks.py), imported by a script of the run.  Where that
script's processes are started once per XLA device (torch_xla.launch or xmp.spawn as written, or the
launcher the port adds: ``convert --distributed``, a torchrun-style main guard), the launcher sets
no RANK, WORLD_SIZE or MASTER_ADDR (torch_xla 2.9, PJRT_DEVICE=CPU: env:// raises "environment
variable RANK expected, but not set" in each process), so with env:// kept every process would fall
back and train alone on all the data: the helper's group meets through xla:// (XLA601's port).  A
script run as plain ``python train.py`` keeps env:// (it still falls back to one process).  An
helper that no file of the run imports (converted alone) is reported, not ported: the tool
cannot tell how its processes start."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.distributed.rules.fallback_group_cases import FALLBACK
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

SETUP = FALLBACK.lstrip("\n")
# A one-device script: a plain run (``convert --distributed`` starts it with the launcher).
PLAIN = """\
import torch

from setup_dist import init_distributed


def main():
    init_distributed()
    model = torch.nn.Linear(2, 2).cuda()
    print(model(torch.ones(1, 2).cuda()))


if __name__ == "__main__":
    main()
"""
# Started by the XLA launcher as written (an alias of the helper's import).
LAUNCHED = """\
import torch
import torch_xla

import setup_dist as sd


def _mp_fn(index):
    sd.init_distributed()
    print(torch.ones(1, 2).to(torch_xla.device()))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
"""
KEPT = 'init_method="env://")'
XLA = {"2.9": 'dist.init_process_group("xla", init_method="xla://")', "sagemaker": "rank=xm.get_ordinal()"}


def _run(
    folder: Path, target: str, distributed: bool = False, mode: str = "write"
) -> dict[str, list[tuple[str, int, str]]]:
    job = Job(mode, target, RuleSelection(), distributed=distributed)  # type: ignore[arg-type]
    names = sorted(p.name for p in folder.glob("*.py"))
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).name: [(f.rule, f.line, f.message) for f in r.findings] for r in reports}


def _converted_twice(folder: Path, target: str, distributed: bool = False) -> tuple[str, list[tuple[str, int, str]]]:
    found = _run(folder, target, distributed, mode="check")
    _run(folder, target, distributed)
    before = {p.name: p.read_text() for p in folder.glob("*.py")}
    _run(folder, target, distributed)
    assert {p.name: p.read_text() for p in folder.glob("*.py")} == before  # a second run changes nothing
    return before["setup_dist.py"], [f for f in found["setup_dist.py"] if f[0] == "XLA601"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_plain_run_keeps_env(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"setup_dist.py": SETUP, "train.py": PLAIN})
    helper, found = _converted_twice(folder, target)
    assert 'dist.init_process_group("xla", init_method="env://")' in helper
    assert [(line, "the env:// rendezvous stays" in message) for _, line, message in found] == [(6, True)]


@pytest.mark.parametrize("target", TARGETS)
def test_distributed_conversion_starts_the_importer_with_the_launcher_so_xla(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"setup_dist.py": SETUP, "train.py": PLAIN})
    helper, found = _converted_twice(folder, target, distributed=True)
    assert KEPT not in helper and XLA[target] in helper, helper
    assert [line for _, line, _ in found] == [6] and "env:// rendezvous stays" not in found[0][2]


@pytest.mark.parametrize("target", TARGETS)
def test_an_importer_started_by_the_xla_launcher_gets_xla(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"setup_dist.py": SETUP, "train.py": LAUNCHED})
    helper, found = _converted_twice(folder, target)
    assert KEPT not in helper and XLA[target] in helper, helper
    assert [line for _, line, _ in found] == [6]


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_no_file_of_the_run_imports_is_an_error(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"setup_dist.py": SETUP, "train.py": LAUNCHED})
    job = Job("write", target, RuleSelection())
    (report,) = run([(str(folder / "setup_dist.py"), job)], workers=1)
    (finding,) = [f for f in report.findings if f.rule == "XLA601"]
    assert finding.line == 6 and finding.severity == "error"
    assert "no file of this run imports this module: the tool cannot tell how its processes start" in finding.message
    assert 'use `init_process_group("xla", init_method="xla://")`' in finding.message
    assert (folder / "setup_dist.py").read_text() == SETUP
