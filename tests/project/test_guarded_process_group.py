"""A process group that a project helper starts only under a CUDA check that stays
(`if distributed and torch.cuda.is_available(): dist.init_process_group(...)`), before a
DistributedDataParallel in another module: on an XLA host no group starts and DDP raises.  The
check is an error (XLA609, not XLA105's warning), on both targets; the DDP's XLA604 message
does not claim a process group its file does not start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

HELPER = """\
import os

import torch
import torch.distributed as dist


def init(rank):
    distributed = "WORLD_SIZE" in os.environ
    if distributed and torch.cuda.is_available():
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl", init_method="env://")
    return distributed
"""

TRAIN = """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import helper


def train(rank, model, loader):
    helper.init(rank)
    model = DDP(model.to("cuda"), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        opt.zero_grad()
        model(x.to("cuda")).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_group_started_only_under_a_kept_cuda_check_is_an_error(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path, "guarded", {"helper.py": HELPER, "train.py": TRAIN})
    found = unfixed_findings(folder, ["helper.py", "train.py"], target)
    assert [(rule, line) for rule, line, _ in found["helper.py"]] == [("XLA609", 9)]
    assert "the process group starts only under it" in found["helper.py"][0][2]


def test_a_group_started_on_every_path_is_no_error(tmp_path: Path) -> None:
    unguarded = HELPER.replace("        dist.init_process_group", "    dist.init_process_group")
    folder = write_project(tmp_path, "unguarded", {"helper.py": unguarded, "train.py": TRAIN})
    found = unfixed_findings(folder, ["helper.py", "train.py"], "2.9")
    assert not [rule for rule, _, _ in found["helper.py"] if rule == "XLA609"]
