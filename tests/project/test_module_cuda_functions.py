"""``utils.cuda(batch, device=device)`` where ``utils`` is a project module imported with ``from pkg
import utils`` (TorchDrug's ``core.Engine``, held-out list 21): a call of the module's function
``cuda``, no Tensor.cuda or Module.cuda.  XLA102 used to write ``utils.to(<XLA device>)``, which drops
the batch and raises AttributeError (the module has no ``to``).  The call stays: in a run that
converts the function's module its body's ``obj.cuda(...)`` becomes a move to the XLA device; in a
run that does not, the call is an error naming that module.  A name a project module binds that is no
module (an instance) is still moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding, Mode
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]
DEVICE = {"2.9": "torch_xla.device()", "sagemaker": "xm.xla_device()"}

HELPERS = """\
import torch


def cpu(obj, *args, **kwargs):
    if hasattr(obj, "cpu"):
        return obj.cpu(*args, **kwargs)
    return type(obj)(cpu(x, *args, **kwargs) for x in obj)


def cuda(obj, *args, **kwargs):
    if hasattr(obj, "cuda"):
        return obj.cuda(*args, **kwargs)
    return type(obj)(cuda(x, *args, **kwargs) for x in obj)
"""

MODELS = """\
import torch

model = torch.nn.Linear(4, 2)
"""

TRAIN = """\
import torch
from pkg import utils
from pkg import utils as tu
from pkg.models import model


def train(loader, optimizer, device):
    model.cuda()
    for batch in loader:
        batch = utils.cuda(batch, device=device)
        pair = tu.cuda([batch, batch])
        loss = model(pair[0]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _write(folder: Path) -> None:
    (folder / "pkg" / "utils").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "utils" / "__init__.py").write_text("from .torch import cpu, cuda\n")
    (folder / "pkg" / "utils" / "torch.py").write_text(HELPERS)
    (folder / "pkg" / "models.py").write_text(MODELS)
    (folder / "train.py").write_text(TRAIN)


def _findings(folder: Path, names: list[str], target: str, mode: Mode = "check") -> dict[str, list[Finding]]:
    job = Job(mode, target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {r.path.removeprefix(str(folder) + "/"): [f for f in r.findings if f.rule == "XLA102"] for r in reports}


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_leaves_the_call_and_ports_the_functions_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    names = ["pkg/utils/torch.py", "pkg/models.py", "train.py"]
    found = _findings(tmp_path, names, target, mode="write")
    # (output lines) obj.cuda(...) of the helper; model.cuda(): an instance the module binds, moved
    # (after the imports the port adds: torch_xla and xm on 2.9, xm alone on sagemaker)
    assert [(f.line, f.col, f.fixed) for f in found["pkg/utils/torch.py"]] == [(13, 16, True)]
    assert [(f.line, f.col, f.fixed) for f in found["train.py"]] == [(10 if target == "2.9" else 9, 5, True)]
    converted = (tmp_path / "train.py").read_text()
    assert "        batch = utils.cuda(batch, device=device)\n" in converted
    assert "        pair = tu.cuda([batch, batch])\n" in converted
    assert f"    model.to({DEVICE[target]})\n" in converted
    assert f"return obj.to({DEVICE[target]})" in (tmp_path / "pkg" / "utils" / "torch.py").read_text()
    again = _findings(tmp_path, names, target, mode="write")  # idempotent
    assert again == {name: [] for name in names}


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_that_does_not_convert_the_functions_module_reports_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    found = _findings(tmp_path, ["train.py"], target)["train.py"]
    assert [(f.line, f.col, f.fixed) for f in found] == [(8, 5, True), (10, 17, False), (11, 16, False)]
    assert found[1].message == (
        "`utils.cuda(batch, device=device)` runs the project's function `cuda` of pkg/utils/torch.py, which this "
        "run does not convert: a function named `cuda` moves what it is handed to CUDA, which fails without it (it "
        "is no `.cuda()` of a module or tensor: as `.to()` it would raise AttributeError and drop its argument); "
        "convert pkg/utils/torch.py too, and its moves become moves to the XLA device"
    )
    assert found[2].message.startswith("`tu.cuda([batch, batch])` runs the project's function `cuda` of")
