"""Executed: a distributed fixture under its own launcher, on torch_xla 2.9 (CPU, world
size 1), with the checks of tests/support/executed.py.  The distributed fixtures' plain runs
(torchrun's environment, mp.spawn, DDP, samplers) are in tests/end_to_end/test_executed.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    copy_fixture,
    loss_problems,
    parse_run,
    run_command,
    run_eager,
    run_environment,
)

pytestmark = pytest.mark.executed


def test_module_level_ddp_runs_under_torchrun_too(tmp_path: Path) -> None:
    """The launcher check of a module-level script stays: as plain `python` it trains on
    one XLA device (tests/end_to_end/test_executed.py), under torchrun it takes its DDP
    branch on the xla:// process group (one process here) and trains the same way."""
    case = Executed("module_ddp.py")
    eager = run_eager(case, tmp_path)
    folder = copy_fixture(case, tmp_path / "torchrun", convert=True)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1", case.script]
    torchrun = parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)
    assert "using device: xla" in torchrun.output
    assert 'int(os.environ.get("RANK", -1)) != -1' in (folder / case.script).read_text()
    assert not loss_problems(torchrun, eager)
