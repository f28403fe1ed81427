"""Executed: ``if rank == 0: print(... time.time() - start)`` where ``start`` is bound only under
``if rank == 0:`` (UnivNet's epoch timer), on torch_xla 2.9 (CPU, one device).

xm.master_print evaluates its arguments in every process, so XLA610 keeps this print's rank check:
the converted script trains like the eager original on the master (rank 0), and a process of
another rank (the worker function called with rank 1, as a launcher's second process would)
trains too and prints no timing.  The negative control is the print as the port used to write it
(``xm.master_print(...)`` without the check): the rank-1 process raises UnboundLocalError at the
end of its first epoch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, eager_and_converted_script, run_script, training_problems

pytestmark = pytest.mark.executed

SOURCE = """\
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def train(rank, world):
    if world > 1:
        dist.init_process_group("nccl", rank=rank, world_size=world)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    step = 0
    for epoch in range(3):
        if rank == 0:
            start = time.time()
        for _ in range(4):
            x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
            loss = F.mse_loss(model(x.to(device)), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"step {step} loss {loss.item()}")
            step += 1
        if rank == 0:
            print("epoch {} took {:.1f}s".format(epoch, time.time() - start))


if __name__ == "__main__":
    train(int(sys.argv[1]) if len(sys.argv) > 1 else 0, 1)
"""
CASE = Executed("train.py", steps_per_epoch=4)
KEPT = """        if rank == 0:
            print("epoch {} took {:.1f}s".format(epoch, time.time() - start))"""
UNGUARDED = """        xm.master_print("epoch {} took {:.1f}s".format(epoch, time.time() - start))"""


def test_a_print_of_a_master_only_name_keeps_its_rank_check(tmp_path: Path) -> None:
    converted, got, want = eager_and_converted_script(tmp_path, "train.py", SOURCE)
    assert KEPT in converted, converted
    problems = training_problems(got, want, CASE)
    assert not problems, problems
    assert "epoch 2 took" in got.output
    other = run_script(tmp_path / "ported", "train.py", "1")
    assert len(other.losses) == 12 and "took" not in other.output


def test_without_the_check_another_rank_raises_unbound_local_error(tmp_path: Path) -> None:
    converted, _, _ = eager_and_converted_script(tmp_path, "train.py", SOURCE)
    script = tmp_path / "ported" / "train.py"
    header = "import torch_xla.core.xla_model as xm\n"
    script.write_text(header + converted.replace(KEPT, UNGUARDED))
    master = run_script(tmp_path / "ported", "train.py")
    assert len(master.losses) == 12 and "epoch 2 took" in master.output
    other = run_script(tmp_path / "ported", "train.py", "1", check=False)
    assert other.returncode != 0 and "UnboundLocalError" in other.stderr, other.stderr[-2000:]
    assert len(other.losses) == 4
