"""Executed: a training loop that moves its batches only ``if n_gpu == 1:``, ``n_gpu`` a CUDA device
count handed on from a helper (``device, n_gpu = init_device()``), under DDP (which, given
``device_ids`` on CUDA, moved the inputs otherwise), on torch_xla 2.9 (CPU), with the checks of
tests/support/executed.py.  The port reads the count from the XLA runtime (the processes on this
host) and drops the guard (XLA108): the converted script trains like the original in eager mode
(same losses, the optimizer steps XLA parameters, no new graph after the warm-up), also where the
runtime counts two processes on the host (``PJRT_LOCAL_PROCESS_COUNT=2``, what torch_xla.launch
sets on a host with two devices).

Negative control: the converted script with the guard kept, as the port used to write it, fails
at the first forward on such a host (the batch stays on the CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import TORCHRUN_ENV, Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def init_device():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return device, torch.cuda.device_count()


def train_epoch(model, batches, optimizer, device, n_gpu):
    for step, batch in enumerate(batches):
        if n_gpu == 1:
            batch = tuple(t.to(device) for t in batch)
        x, y = batch
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


def main():
    dist.init_process_group("gloo")
    device, n_gpu = init_device()
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    model = DDP(nn.Linear(4, 2).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_epoch(model, batches, optimizer, device, n_gpu)


if __name__ == "__main__":
    main()
"""
GUARDED_MOVE = "        if n_gpu == 1:\n            batch = tuple(t.to(device) for t in batch)\n"
MOVE = "        batch = tuple(t.to(device) for t in batch)\n"


@pytest.mark.parametrize("processes", ["1", "2"])
def test_the_guard_goes_and_the_batches_reach_the_device_however_many_processes(tmp_path: Path, processes: str) -> None:
    eager_folder = write_project(tmp_path / "eager", "guard", {"train.py": TRAIN})
    eager = run_script(eager_folder, "train.py", on_xla=False, env=dict(TORCHRUN_ENV))
    folder = converted_project(tmp_path / "ported", "guard", {"train.py": TRAIN})
    ported = (folder / "train.py").read_text()
    assert MOVE in ported and "n_gpu == 1" not in ported and "xr.local_process_count()" in ported
    run = run_script(folder, "train.py", env={"PJRT_LOCAL_PROCESS_COUNT": processes})
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_guard_kept_the_batch_stays_on_the_cpu_on_a_host_of_two_processes(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "kept", "guard", {"train.py": TRAIN})
    script = folder / "train.py"
    script.write_text(script.read_text().replace(MOVE, GUARDED_MOVE))
    run = run_script(folder, "train.py", check=False, env={"PJRT_LOCAL_PROCESS_COUNT": "2"})
    assert run.returncode != 0
    assert "Expected XLA tensor. Got: torch.FloatTensor" in run.stderr
    assert "step 0 loss" not in run.output
