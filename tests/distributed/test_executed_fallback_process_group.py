"""Executed: a set-up helper that starts the process group in a ``try`` with the env:// rendezvous
and falls back to one process in its ``except`` (RT-DETR's ``init_distributed``), in a script that
converts its BatchNorm layers to SyncBatchNorm only once a group is started, run as the README's
plain ``python train.py`` on torch_xla 2.9 (CPU, one device), through the runner that counts its
graphs.

The port keeps the env:// rendezvous (XLA601): without a launcher's RANK/WORLD_SIZE it fails as in
the original, the script goes on with one process and trains.  Under torchrun's variables the group
starts.  The negative control is the port as it used to be written (``init_method="xla://"``): the
group of one starts, SyncBatchNorm wraps the model and its first forward raises ValueError.

Both runs that train are held to tests/support/executed.py's checks against the original's eager run
(which falls back too: no NCCL on the CPU): the same losses, on XLA, and no new graph after the
warm-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    STEADY_STEPS,
    TORCHRUN_ENV,
    WARMUP_STEPS,
    Executed,
    converted_project,
    run_script,
    training_problems,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = WARMUP_STEPS + STEADY_STEPS  # a warm-up, then steps that must compile nothing

SETUP = """\
import sys

import torch
import torch.distributed as dist


def init_distributed():
    try:
        dist.init_process_group(backend="nccl", init_method="env://")
        torch.cuda.set_device(dist.get_rank())
        print("distributed")
        return True
    except:
        print("not distributed:", sys.exc_info()[1])
        return False
"""
TRAIN = f"""\
import sys

import torch
import torch.distributed as dist

from setup_dist import init_distributed


def main():
    init_distributed()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten())
    if dist.is_available() and dist.is_initialized() and "--sync-bn" in sys.argv:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range({STEPS}):
        opt.zero_grad()
        loss = model(torch.randn(2, 3, 6, 6).to(device)).pow(2).mean()
        loss.backward()
        opt.step()
        print(f"step {{step}} loss {{loss.item():.6f}}")


if __name__ == "__main__":
    main()
"""
FILES = {"setup_dist.py": SETUP, "train.py": TRAIN}
PORTED = 'dist.init_process_group("xla", init_method="env://")'


def _converted(folder: Path) -> Path:
    converted = converted_project(folder, "proj", FILES)
    assert PORTED in (converted / "setup_dist.py").read_text()
    return converted


def _trained(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The converted script's run (through the runner, which counts its graphs) against the original's
    eager run, with ``args`` and ``env`` in both: its output."""
    eager = run_script(write_project(tmp_path / "eager", "proj", FILES), "train.py", *args, on_xla=False, env=env)
    run = run_script(_converted(tmp_path / "xla"), "train.py", *args, env=env)
    assert len(eager.losses) == STEPS, eager.output
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, (problems, run.output)
    return run.output


def test_a_plain_run_falls_back_to_one_process_and_trains(tmp_path: Path) -> None:
    output = _trained(tmp_path, "--sync-bn")
    assert "not distributed" in output, output


def test_under_torchrun_variables_the_group_starts(tmp_path: Path) -> None:
    output = _trained(tmp_path, env=dict(TORCHRUN_ENV))
    assert "\ndistributed" in "\n" + output, output  # its own line, not "not distributed"


def test_negative_control_an_xla_rendezvous_starts_a_group_of_one_and_sync_batchnorm_raises(tmp_path: Path) -> None:
    converted = _converted(tmp_path)
    setup = converted / "setup_dist.py"
    setup.write_text(setup.read_text().replace(PORTED, 'dist.init_process_group("xla", init_method="xla://")'))
    run = run_script(converted, "train.py", "--sync-bn", runner=False, check=False)
    assert run.returncode != 0 and "ValueError" in run.stderr and "SyncBatchNorm" in run.stderr, run.stderr[-2000:]


# The helper imported by a script that torch_xla.launch starts (as written): the launcher sets no
# RANK or WORLD_SIZE, so the port meets through xla:// (distributed/fallbacks.py).
LAUNCHED = """\
import torch
import torch.distributed as dist
import torch_xla

from setup_dist import init_distributed


def _mp_fn(index):
    init_distributed()
    if dist.is_initialized():
        print(f"world {dist.get_world_size()}")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
"""
TWO_DEVICES = {"CPU_NUM_DEVICES": "2"}
LAUNCHED_PORT = 'dist.init_process_group("xla", init_method="xla://")'


def test_under_torch_xla_launch_every_process_joins_the_group(tmp_path: Path) -> None:
    converted = converted_project(tmp_path, "proj", {"setup_dist.py": SETUP, "launched.py": LAUNCHED})
    assert LAUNCHED_PORT in (converted / "setup_dist.py").read_text()
    run = run_script(converted, "launched.py", runner=False, env=TWO_DEVICES)
    assert run.output.count("world 2") == 2 and "not distributed" not in run.output, run.output


def test_negative_control_env_under_torch_xla_launch_falls_back_in_every_process(tmp_path: Path) -> None:
    converted = converted_project(tmp_path, "proj", {"setup_dist.py": SETUP, "launched.py": LAUNCHED})
    setup = converted / "setup_dist.py"
    setup.write_text(setup.read_text().replace(LAUNCHED_PORT, PORTED))
    run = run_script(converted, "launched.py", runner=False, env=TWO_DEVICES)
    assert run.output.count("not distributed") == 2 and "world" not in run.output, run.output
