"""Executed: YOLOv6's rank helper (``int(os.getenv("RANK", -1))``: -1 when no launcher started
the run) and a script that tells a single-process run by that -1 (``master = rank == 0 if
world_size > 1 else rank == -1``; DDP and the process group only ``if rank != -1``), on
torch_xla 2.9 (CPU, one device).

Converted as a project, the helper reads the runtime's rank where several processes run and keeps
-1 on one device (XLA602): the run on one XLA device is the master that writes ``runs/args.yaml``,
and trains like the eager original run with no launcher (same losses, no new graph after the
warm-up).  The negative control is the helper as the port used to write it (the runtime's ranks
alone, 0 on one device): the master test turns false and ``args.yaml`` is never written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

ENVS = """\
import os

import torch


def get_envs():
    local_rank = int(os.getenv("LOCAL_RANK", -1))
    rank = int(os.getenv("RANK", -1))
    world_size = int(os.getenv("WORLD_SIZE", 1))
    return local_rank, rank, world_size
"""
TRAIN = """\
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from envs import get_envs


def main():
    local_rank, rank, world_size = get_envs()
    master = rank == 0 if world_size > 1 else rank == -1
    if master:
        os.makedirs("runs", exist_ok=True)
        with open(os.path.join("runs", "args.yaml"), "w") as f:
            f.write("lr: 0.05\\n")
    if local_rank != -1:
        dist.init_process_group("nccl")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
    if rank != -1:
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    for step in range(12):
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        loss = F.mse_loss(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""
FILES = {"envs.py": ENVS, "train.py": TRAIN}
CASE = Executed("train.py", launched=True)
PORTED = "rank = xr.global_ordinal() if xr.world_size() > 1 else -1"


def test_the_single_process_rank_default_is_kept_on_one_xla_device(tmp_path: Path) -> None:
    eager = write_project(tmp_path / "eager", "ranks", FILES)
    want = run_script(eager, "train.py", on_xla=False)
    assert len(want.losses) == 12 and (eager / "runs" / "args.yaml").is_file()
    folder = converted_project(tmp_path / "xla", "ranks", FILES)
    assert PORTED in (folder / "envs.py").read_text()
    got = run_script(folder, "train.py")
    problems = training_problems(got, want, CASE)
    assert not problems, problems
    assert (folder / "runs" / "args.yaml").is_file()


def test_the_runtime_rank_alone_turns_the_single_process_master_test_false(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "ranks", FILES)
    envs = folder / "envs.py"
    envs.write_text(envs.read_text().replace(" if xr.world_size() > 1 else -1", ""))
    got = run_script(folder, "train.py")
    assert len(got.losses) == 12
    assert not (folder / "runs").exists()
