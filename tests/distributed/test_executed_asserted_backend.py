"""Executed: a project whose communication helper reads the process group's backend at run time
and asserts it (detectron2's ``comm.py``: ``assert backend in ["gloo", "nccl"]``, then the
device by the backend) before it gathers a seed with ``dist.all_gather``, and whose training
script starts the group torchrun-style, run on torch_xla 2.9 (CPU) through the runner that counts
its graphs.

The port starts the group with the "xla" backend (XLA601), so ``dist.get_backend()`` returns
"xla"; XLA114 adds it to the assertion's choices, and the gather and the training run on XLA.
The negative control is the port as it used to be written (the choices left as they were): the
assertion stops the script before its first step.  The original cannot run here (NCCL needs CUDA),
so the run is held to running on XLA and training, not to the eager losses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script, xla_problems

pytestmark = pytest.mark.executed

STEPS = 8

COMM = """\
import pickle

import torch
import torch.distributed as dist


def _serialize_to_tensor(data):
    backend = dist.get_backend()
    assert backend in ["gloo", "nccl"]
    device = torch.device("cpu" if backend == "gloo" else "cuda")
    return torch.ByteTensor(list(pickle.dumps(data))).to(device)


def shared_seed():
    tensor = _serialize_to_tensor(1234)
    gathered = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)
    return pickle.loads(bytes(gathered[0].cpu().tolist()))
"""
TRAIN = f"""\
import os

import torch
import torch.distributed as dist

from comm import shared_seed


def main():
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    print("seed", shared_seed())
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    for step in range({STEPS}):
        opt.zero_grad()
        loss = model(x.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        print(f"step {{step}} loss {{loss.item():.6f}}")


if __name__ == "__main__":
    main()
"""
FILES = {"comm.py": COMM, "train.py": TRAIN}
PORTED = 'assert backend in ["gloo", "nccl", "xla"]'


def _converted(folder: Path) -> Path:
    converted = converted_project(folder, "proj", FILES)
    comm = (converted / "comm.py").read_text()
    assert PORTED in comm and 'else "xla")' in comm, comm
    assert 'dist.init_process_group("xla"' in (converted / "train.py").read_text()
    return converted


def test_the_backend_assertion_passes_and_the_gather_and_training_run_on_xla(tmp_path: Path) -> None:
    run = run_script(_converted(tmp_path), "train.py")
    assert "seed 1234" in run.output, run.output
    assert len(run.losses) == STEPS and run.losses[-1] < run.losses[0], run.output
    assert not xla_problems(run), (xla_problems(run), run.output)


def test_negative_control_the_choices_as_they_were_stop_the_script(tmp_path: Path) -> None:
    converted = _converted(tmp_path)
    comm = converted / "comm.py"
    comm.write_text(comm.read_text().replace(PORTED, 'assert backend in ["gloo", "nccl"]'))
    run = run_script(converted, "train.py", runner=False, check=False)
    assert run.returncode != 0 and "AssertionError" in run.stderr, run.stderr[-2000:]
    assert not run.losses, run.output
