"""Executed, on torch_xla 2.9 (CPU): single-file runs that leave another module of the project as
it is, where that module is right on XLA as it is, so the run reports no XLA003 for it.

A step helper of another module (plain ``opt.step()`` calls, one in an inner loop) and an optimizer
class of another module (``first_step``/``second_step``, the second stepping its base optimizer
plainly): on one process the plain steps, closed by the loop's barrier, train the model on the XLA
device.  A token cache (lists of ints built from ``range``) that the other module writes with
``torch.save`` and reads back with ``torch.load``: the second run loads it and trains on XLA.  The
optimizer class converted with the project (its own ``step(closure)``, which nothing calls, is no
undriven step) trains on XLA too.  The negative control: the same scripts unconverted train on the
CPU, which the check tells apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.project.test_step_helpers import TRAIN, TWO_STEP, TWO_STEP_TRAIN, UPDATE
from tests.support.executed import convert_folder, run_command, run_environment
from tests.support.fixtures import output_bytes

pytestmark = pytest.mark.executed

REPORT = '\nprint("changed:", not torch.equal(w0, {weight}.detach().cpu()), "| on", {weight}.device)\n'

TOKEN_CACHE = """\
import os
import torch


def get_dataset(cache_path):
    if os.path.isfile(cache_path):
        data = torch.load(cache_path)
    else:
        data = {"train": [[i, i + 1, i + 2] for i in range(32)]}
        torch.save(data, cache_path)
    return data
"""

TOKEN_TRAIN = """\
import torch
import torch.nn as nn

from data_utils import get_dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data = get_dataset("token_cache")
model = nn.Embedding(64, 4).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.detach().cpu().clone()
for epoch in range(2):
    for seq in data["train"]:
        loss = model(torch.tensor(seq).to(device)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def _with_weight(script: str, weight: str) -> str:
    first_loop = script.index("for epoch")
    start = "" if "w0 = " in script else f"w0 = {weight}.detach().cpu().clone()\n"
    return script[:first_loop] + start + script[first_loop:] + REPORT.format(weight=weight)


PROJECTS = {
    "step-helper": (
        {
            "core/__init__.py": "",
            "core/update.py": UPDATE,
            "train.py": _with_weight(TRAIN.format(setup="", wrap=""), "policy_net.weight"),
        },
        1,
    ),
    "optimizer-class": ({"twostep.py": TWO_STEP, "train.py": _with_weight(TWO_STEP_TRAIN, "model.weight")}, 1),
    "token-cache": ({"data_utils.py": TOKEN_CACHE, "train.py": _with_weight(TOKEN_TRAIN, "model.weight")}, 2),
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")


def _runs(folder: Path, times: int) -> list[str]:
    env = run_environment(PJRT_DEVICE="CPU")
    return [run_command([sys.executable, "train.py"], folder, env).strip().splitlines()[-1] for _ in range(times)]


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_a_single_file_run_that_leaves_a_module_right_on_xla_trains_on_xla(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    files, times = PROJECTS[name]
    _write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path, summarise_with("2.9", RuleSelection(), None), in_run=[tmp_path / "train.py"])
    conversion = convert_source((tmp_path / "train.py").read_bytes(), imports=project.imports_of(tmp_path / "train.py"))
    assert [f.message for f in conversion.findings if f.rule == "XLA003"] == []
    (tmp_path / "train.py").write_bytes(output_bytes(conversion))
    assert _runs(tmp_path, times) == ["changed: True | on xla:0"] * times


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_unconverted_the_same_scripts_train_on_the_cpu(tmp_path: Path, name: str) -> None:
    files, times = PROJECTS[name]
    _write(tmp_path, files)
    assert _runs(tmp_path, times) == ["changed: True | on cpu"] * times


def test_an_optimizer_class_converted_with_its_script_trains_on_xla(tmp_path: Path) -> None:
    files, times = PROJECTS["optimizer-class"]
    _write(tmp_path, files)
    convert_folder(tmp_path)
    assert "xm.optimizer_step(self.base_optimizer)" in (tmp_path / "twostep.py").read_text()
    assert _runs(tmp_path, times) == ["changed: True | on xla:0"] * times
