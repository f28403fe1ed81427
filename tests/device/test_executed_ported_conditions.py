"""Executed: a choice of backends (``backend = "gloo" if use_cpu else "nccl"``) that the port
makes "xla", tested later to pick the device (``if backend == "nccl": device = cuda else: cpu``).
The comparison is ported with the value (XLA114: ``backend == "xla"``), so the converted script
picks the XLA device and trains there like the original's eager run (on gloo and the CPU), with
one graph per step after the warm-up.  The negative control leaves the comparison as the author
wrote it: the XLA branch is dead, and the script trains on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    TORCHRUN_ENV,
    Executed,
    barrier_per_step_problems,
    converted_project,
    run_script,
    xla_problems,
)
from tests.support.projects import write_project
from tests.support.training_programs import linear_steps

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import os
import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    use_cpu = os.environ.get("USE_CPU") == "1"
    local_rank = int(os.environ["LOCAL_RANK"])
    backend = "gloo" if use_cpu else "nccl"
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend=backend)
{linear_steps(STEPS)}    print("trained on", next(model.parameters()).device.type)


if __name__ == "__main__":
    main()
"""

FILES = {"train.py": TRAIN}


def test_the_backend_comparison_is_ported_and_the_script_trains_on_xla(tmp_path: Path) -> None:
    eager_folder = write_project(tmp_path / "eager", "backends", FILES)
    eager = run_script(eager_folder, "train.py", on_xla=False, env={**dict(TORCHRUN_ENV), "USE_CPU": "1"})
    assert len(eager.losses) == STEPS and "trained on cpu" in eager.output
    folder = converted_project(tmp_path / "ported", "backends", FILES)
    ported = (folder / "train.py").read_text()
    assert 'backend = "xla"' in ported and 'if backend == "xla":' in ported, ported
    run = run_script(folder, "train.py")
    assert "trained on xla" in run.output, run.output[-2000:]
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    # The negative control: the comparison as the author wrote it leaves the XLA branch dead.
    (folder / "train.py").write_text(ported.replace('if backend == "xla":', 'if backend == "nccl":'))
    dead = run_script(folder, "train.py")
    assert "trained on cpu" in dead.output and xla_problems(dead), dead.output[-2000:]
