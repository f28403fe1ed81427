"""A DistributedDataParallel subclass of another project module (the twenty-first held-out list's
ProDiff shape): ``utils/ddp_utils.py`` defines ``class DDP(DistributedDataParallel)`` overriding
``forward``, and the trainer wraps its model with ``DDP(task, device_ids=[self.root_gpu], ...)``.
The construction is a DDP one: XLA604 drops its ``device_ids`` (torch's DDP would move the inputs to
the device of that index, which no process of a PJRT run has but its own), and the trainer wraps its
model in DDP, so its scaled backward needs no all-reduce of its own (no XLA607).  A class of the same
name deriving from ``nn.Module`` keeps its arguments (negative control)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

DDP_UTILS = """\
from torch.nn.parallel import DistributedDataParallel


class DDP(DistributedDataParallel):
    def forward(self, *inputs, **kwargs):
        return self.module.training_step(*inputs, **kwargs)
"""
MODULE_UTILS = """\
import torch


class DDP(torch.nn.Module):
    def __init__(self, module, device_ids=None, find_unused_parameters=False):
        super().__init__()
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module.training_step(*inputs, **kwargs)
"""
# Through a second module: ``class TaskDDP(DDP)`` with DDP the first's subclass.
DERIVED_UTILS = """\
from utils.ddp_utils import DDP


class TaskDDP(DDP):
    pass
"""
TRAINER = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from utils.ddp_utils import DDP


class Trainer:
    def __init__(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def fit(self, task):
        mp.spawn(self.ddp_run, nprocs=2, args=(task,))

    def ddp_run(self, gpu_idx, task):
        dist.init_process_group("nccl", rank=gpu_idx, world_size=2)
        self.root_gpu = gpu_idx
        task = task.cuda(self.root_gpu)
        task = DDP(task, device_ids=[self.root_gpu], find_unused_parameters=True)
        optimizer = torch.optim.SGD(task.parameters(), lr=0.1)
        for batch in task.loader():
            with torch.cuda.amp.autocast():
                loss = task(batch)
            self.scaler.scale(loss).backward()
            grad_norm = 0.0
            self.scaler.step(optimizer)
            self.scaler.update()
            optimizer.zero_grad()
"""
DDP_LINE = 19


def _findings(
    folder: Path, names: list[str], target: str, mode: Literal["check", "write"] = "check"
) -> dict[str, list[Finding]]:
    job = Job(mode, target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).resolve().relative_to(folder.resolve()).as_posix(): r.findings for r in reports}


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, utils: str, trainer: str = TRAINER) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {
        "utils/__init__.py": "",
        "utils/ddp_utils.py": utils,
        "utils/derived.py": DERIVED_UTILS,
        "trainer.py": trainer,
    }
    return write_project(tmp_path, "proj", files)


WHOLE = ["utils/__init__.py", "utils/ddp_utils.py", "utils/derived.py", "trainer.py"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [WHOLE, ["trainer.py"]], ids=["whole", "single"])
def test_a_ddp_subclass_of_another_module_drops_its_device_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    folder = _project(tmp_path, monkeypatch, DDP_UTILS)
    found = _findings(folder, names, target)["trainer.py"]
    ddp = [f for f in found if f.rule == "XLA604"]
    assert [(f.line, f.col) for f in ddp] == [(DDP_LINE, 16)], found
    assert ddp[0].message.startswith("device_ids removed from DDP(...) (a DistributedDataParallel subclass): ")
    assert not [f for f in found if f.rule == "XLA607"], found
    _findings(folder, names, target, mode="write")
    converted = (folder / "trainer.py").read_text()
    assert "task = DDP(task, find_unused_parameters=True)" in converted
    again = _findings(folder, names, target, mode="write")["trainer.py"]
    assert (folder / "trainer.py").read_text() == converted
    assert not [f for f in again if f.rule == "XLA604" and f.fixed], again


@pytest.mark.parametrize("target", TARGETS)
def test_a_subclass_of_a_subclass_in_a_third_module_is_a_ddp_construction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    trainer = TRAINER.replace("from utils.ddp_utils import DDP", "from utils.derived import TaskDDP as DDP")
    folder = _project(tmp_path, monkeypatch, DDP_UTILS, trainer)
    found = _findings(folder, WHOLE, target)["trainer.py"]
    assert [(f.line, f.col) for f in found if f.rule == "XLA604"] == [(DDP_LINE, 16)], found


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_class_named_ddp_keeps_its_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    folder = _project(tmp_path, monkeypatch, MODULE_UTILS)
    found = _findings(folder, WHOLE, target)["trainer.py"]
    assert not [f for f in found if f.rule == "XLA604"], found
    assert [f.line for f in found if f.rule == "XLA607"] == [24], found  # nothing reduces the gradients
