"""A helper that starts the process group only under a launcher check (``if "RANK" in
os.environ``) leaves a script that torch_xla.launch starts without one (XLA609).  Where the
script, or its model's module, then runs a collective with no check that a process group is
started (ALBEF's ``concat_all_gather`` in the forward: ``torch.distributed.all_gather``; a
``dist.barrier()`` in the epoch loop), the run crashes there ("Default process group has not been
initialized"): the finding says so, naming the collective and where it is.  A collective
under ``if dist.is_initialized():``, or after ``if not ...: return``, changes nothing: the
finding keeps saying that each process trains its own copy; so does the helper's own
``dist.barrier()`` right after its ``init_process_group``, when the branch without the launcher's
variables returns first (Deformable-DETR's and torchdistill's ``init_distributed_mode``), and a
collective of a function its module names only under a flag (CvT's ``_meter_reduce if distributed
else ...``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project
from tests.support.training_programs import INIT_DISTRIBUTED_MODE

TARGETS = ["2.9", "sagemaker"]

MODEL = """\
import torch
import torch.distributed as dist


def concat_all_gather(tensor):
    gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor, async_op=False)
    return torch.cat(gathered)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(concat_all_gather(x))
"""
CHECKED_MODEL = MODEL.replace(
    "def concat_all_gather(tensor):\n",
    "def concat_all_gather(tensor):\n    if not dist.is_initialized():\n        return tensor\n",
)
SCRIPT = """\
import argparse

import torch

import helpers
from model import Net


def main(args):
    helpers.init_distributed_mode(args)
    model = Net().cuda()
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for _ in range(4):
            loss = model(torch.randn(4, 2).cuda()).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        BARRIER


if __name__ == "__main__":
    main(argparse.Namespace())
"""
CRASH = "raises there (ValueError: Default process group has not been initialized)"
COPIES = "with a plain optimizer step each trains its own copy"


def _manual(tmp_path: Path, target: str, model: str, barrier: str) -> str:
    folder = write_project(
        tmp_path / "p",
        "p",
        {"helpers.py": INIT_DISTRIBUTED_MODE, "model.py": model, "train.py": SCRIPT.replace("BARRIER", barrier)},
    )
    found = unfixed_findings(folder, ["train.py", "helpers.py", "model.py"], target)
    (message,) = [m for rule, _, m in found["train.py"] if rule == "XLA609"]
    return message


@pytest.mark.parametrize("target", TARGETS)
def test_a_collective_in_the_models_forward_is_the_crash_the_finding_names(tmp_path: Path, target: str) -> None:
    message = _manual(tmp_path, target, MODEL, "pass")
    assert (
        "model.py:7), which runs with no check" in message
        and "`torch.distributed.all_gather` (" in message
        and CRASH in message
    ), message
    assert COPIES not in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_barrier_in_the_script_is_the_crash_the_finding_names(tmp_path: Path, target: str) -> None:
    message = _manual(tmp_path, target, CHECKED_MODEL, "torch.distributed.barrier()")
    assert "`torch.distributed.barrier` (this file, in `main`)" in message and CRASH in message, message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "barrier",
    ["pass", "if torch.distributed.is_initialized():\n            torch.distributed.barrier()"],
    ids=["none", "checked"],
)
def test_checked_collectives_keep_the_copies_message(tmp_path: Path, target: str, barrier: str) -> None:
    message = _manual(tmp_path, target, CHECKED_MODEL, barrier)
    assert COPIES in message and CRASH not in message, message


# Deformable-DETR's util/misc.py: the barrier follows the process group's start, which the
# ``else: ... return`` branch (no launcher variables: torch_xla.launch's case) never reaches.
BARRIER_AFTER_START = INIT_DISTRIBUTED_MODE + "    torch.distributed.barrier()\n"
# The near variant that does crash: the process group starts in the launcher's branch, and the
# ``else`` branch falls through to the barrier.
BARRIER_FALLEN_THROUGH = """\
import os

import torch


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.distributed = True
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    else:
        args.distributed = False
    torch.distributed.barrier()
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("helper", [BARRIER_AFTER_START, BARRIER_FALLEN_THROUGH], ids=["returned", "fallen-through"])
def test_a_barrier_after_the_helpers_start_of_the_process_group(tmp_path: Path, target: str, helper: str) -> None:
    folder = write_project(
        tmp_path / "p",
        "p",
        {"helpers.py": helper, "model.py": CHECKED_MODEL, "train.py": SCRIPT.replace("BARRIER", "pass")},
    )
    found = unfixed_findings(folder, ["train.py", "helpers.py", "model.py"], target)
    (message,) = [m for rule, _, m in found["train.py"] if rule == "XLA609"]
    if helper is BARRIER_AFTER_START:
        assert COPIES in message and CRASH not in message, message
    else:
        assert "helpers.py:12), which runs with no check" in message and CRASH in message, message


# CvT's lib/core/function.py: the meters are reduced by a function the module names only under
# its ``distributed`` flag (``map(_meter_reduce if distributed else lambda m: m.avg, meters)``),
# which is False where no process group started: its collective never runs there.
FLAGGED_REDUCE = (
    CHECKED_MODEL
    + """

def _reduce(value):
    total = torch.tensor([value])
    dist.reduce(total, 0)
    return total.item()


def average(values, distributed=False):
    return list(map(_reduce if distributed else float, values))
"""
)
# The near variant that does crash: the module calls it with no check.
UNFLAGGED_REDUCE = FLAGGED_REDUCE.replace("map(_reduce if distributed else float, values)", "map(_reduce, values)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", [FLAGGED_REDUCE, UNFLAGGED_REDUCE], ids=["flagged", "unflagged"])
def test_a_collective_of_a_function_named_only_under_a_flag(tmp_path: Path, target: str, model: str) -> None:
    message = _manual(tmp_path, target, model, "pass")
    if model is FLAGGED_REDUCE:
        assert COPIES in message and CRASH not in message, message
    else:
        assert "`torch.distributed.reduce` (" in message and "model.py:24), which runs" in message, message
        assert CRASH in message, message
