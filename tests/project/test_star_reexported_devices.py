"""A device chosen in a module that a package re-exports with a star import (rl-starter-files:
``utils/__init__.py`` does ``from .other import *``, utils/other.py holds ``device =
torch.device("cuda" if ...)``), imported by name by a script in a folder of its own that names no
torch (``scripts/train.py``: ``from utils import device``, run as ``python -m scripts.train`` from
the repository) and handed, with the model, to torch_ac's algorithm, which builds and steps its own
optimizer.  A single-file run of the script reports the device module at the import (XLA003: the
package is skipped unparsed, and its summary binds what its star import binds), also in a copy
without .git (the script's imports are found only in the folder above its own: it runs from there),
and the library's steps at the algorithm's call (XLA307); a run on the project ports the device and
still reports the library's steps; a second run changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

OTHER = """\
import random
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed(value):
    random.seed(value)
    torch.manual_seed(value)
"""
OTHER_PORTED = """\
import random
import torch
import torch_xla

device = torch_xla.device()


def seed(value):
    random.seed(value)
    torch.manual_seed(value)
    torch_xla.manual_seed(value)
"""
MODEL = """\
import torch.nn as nn


class ACModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 2)
"""
TRAIN = """\
import argparse
import torch_ac

import utils
from utils import device
from model import ACModel

if __name__ == "__main__":
    args = argparse.ArgumentParser().parse_args()
    utils.seed(1)
    acmodel = ACModel()
    acmodel.to(device)
    algo = torch_ac.PPOAlgo([], acmodel, device)
    for update in range(10):
        exps, logs1 = algo.collect_experiences()
        logs2 = algo.update_parameters(exps)
"""


def _project(folder: Path, other: str, marked: bool) -> Path:
    if marked:
        (folder / "pyproject.toml").write_text("[project]\nname = 'rl'\n")
    (folder / "utils").mkdir()
    (folder / "scripts").mkdir()
    (folder / "utils" / "__init__.py").write_text("from .other import *\n")
    (folder / "utils" / "other.py").write_text(other)
    (folder / "model.py").write_text(MODEL)
    (folder / "scripts" / "train.py").write_text(TRAIN)
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


@pytest.mark.parametrize("marked", [True, False], ids=["marked-root", "no-root-marker"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_reports_the_star_reexported_device_and_the_librarys_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, marked: bool
) -> None:
    monkeypatch.chdir(_project(tmp_path, OTHER, marked))
    findings = _findings(tmp_path, ["scripts/train.py"], target)["scripts/train.py"]
    assert [(rule, line) for rule, line, _ in findings] == [("XLA003", 4), ("XLA003", 5), ("XLA307", 13)], findings
    # ``import utils``, used as ``utils.seed(1)``: the package's star import leads to other.py too; a seed of
    # the CPU generator is said as what it is (it runs on XLA), not as code that crashes there.
    assert (
        "utils/__init__.py, which this run does not convert, holds a seed of the CPU generator alone" in findings[0][2]
    )
    assert "the draws it makes on the XLA device ignore that seed" in findings[0][2]
    assert "crashes or leaves the XLA device;" not in findings[0][2]
    assert "utils/other.py, which this run does not convert, holds a CUDA device choice (" in findings[1][2]
    assert '`device` has `torch.device("cuda" if torch.cuda.is_available() else "cpu")` (line 4)' in findings[1][2]
    assert findings[2][2].startswith("`torch_ac.PPOAlgo` (torch_ac): it moves the model to the device it is handed")


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_module_already_on_xla_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    # (ported for the target: torch_xla 1.13 has no torch_xla.device(), another release's name there)
    ported = OTHER_PORTED if target == "2.9" else OTHER_PORTED.replace("torch_xla.device()", "xm.xla_device()")
    ported = ported.replace("import torch_xla\n", "import torch_xla\nimport torch_xla.core.xla_model as xm\n")
    monkeypatch.chdir(_project(tmp_path, ported, marked=True))
    findings = _findings(tmp_path, ["scripts/train.py"], target)["scripts/train.py"]
    assert [(rule, line) for rule, line, _ in findings] == [("XLA307", 13)], findings


def test_a_run_on_the_project_ports_the_device_and_reports_the_librarys_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path, OTHER, marked=False))
    names = ["utils/__init__.py", "utils/other.py", "model.py", "scripts/train.py"]
    findings = _findings(tmp_path, names, "2.9", mode="write")
    assert [(rule, line) for rule, line, _ in findings["scripts/train.py"]] == [("XLA307", 13)]
    assert (tmp_path / "utils" / "other.py").read_text() == OTHER_PORTED
    again = _findings(tmp_path, names, "2.9", mode="diff")
    assert [(rule, line) for rule, line, _ in again["scripts/train.py"]] == [("XLA307", 13)]
    assert (tmp_path / "scripts" / "train.py").read_text() == TRAIN
