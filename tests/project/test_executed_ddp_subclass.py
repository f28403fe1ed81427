"""Executed: a DistributedDataParallel subclass of another project module (the twenty-first held-out
list's ProDiff shape: ``class DDP(DistributedDataParallel)`` in ``utils/ddp_utils.py``), built by a
worker that mp.spawn starts with ``device_ids=[rank]``, on torch_xla 2.9 (CPU, one device).

The port drops the subclass's device_ids as torch's DDP's (XLA604): the worker trains over the xla
process group.  The negative control is the port with the device_ids kept as the worker of index 1 of
a two-device run passes them (``device_ids=[1]``): a PJRT process drives xla:0 alone, and DDP's forward
copies the inputs to xla:1 through a side stream, which XLA does not have (TypeError), before the first
step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

DDP_UTILS = """\
from torch.nn.parallel import DistributedDataParallel


class DDP(DistributedDataParallel):
    def forward(self, *inputs, **kwargs):
        return super().forward(*inputs, **kwargs)
"""
TRAIN = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

from utils.ddp_utils import DDP


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def forward(self, x, y):
        return F.mse_loss(self.lin(x), y)


def run(rank):
    dist.init_process_group("nccl", rank=rank, world_size=1)
    torch.manual_seed(0)
    model = Net().cuda(rank)
    model = DDP(model, device_ids=[rank], find_unused_parameters=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    for step in range(6):
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        loss = model(x.cuda(rank), y.cuda(rank))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    mp.spawn(run, nprocs=1)
"""
FILES = {"utils/__init__.py": "", "utils/ddp_utils.py": DDP_UTILS, "train.py": TRAIN}
PORTED = "model = DDP(model, find_unused_parameters=True)"


def test_the_subclass_without_device_ids_trains_on_xla(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "ddpsub", FILES)
    assert PORTED in (folder / "train.py").read_text()
    got = run_script(folder, "train.py", runner=False)
    assert len(got.losses) == 6, got.output
    assert got.losses[-1] < got.losses[0], got.losses


def test_the_device_ids_of_another_worker_break_the_subclass(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "ddpsub", FILES)
    script = folder / "train.py"
    kept = "model = DDP(model, device_ids=[1], find_unused_parameters=True)"
    script.write_text(script.read_text().replace(PORTED, kept))
    got = run_script(folder, "train.py", runner=False, check=False)
    assert got.returncode != 0 and not got.losses, got.output
    assert "does not support the context manager protocol" in got.stderr, got.stderr[-3000:]
