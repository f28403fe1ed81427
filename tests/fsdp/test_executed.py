"""Executed: the FSDP port on torch_xla 2.9 (CPU, world size 1), with the checks of
tests/support/executed.py, and its negative control.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import (
    TORCHRUN_ENV,
    Executed,
    run_unported,
    run_xla,
    steady_problems,
    xla_problems,
)
from tests.support.fixtures import output_bytes
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed

# FSDP -> torch_xla's FSDP (the original: torch's FSDP on gloo), as tests/end_to_end/test_executed.py trains it.
CASE = Executed("dist_fsdp.py", steps_per_epoch=8, env=TORCHRUN_ENV, launched=True)


def test_fsdp_port_is_torch_xlas_wrapper_with_a_plain_step(tmp_path: Path) -> None:
    """The FSDP fixture trains like the original (tests/end_to_end/test_executed.py)
    through torch_xla's wrapper, stepping its optimizer plainly (XlaFullyShardedDataParallel
    reduce-scatters the gradients; xm.optimizer_step would all-reduce them again); with its
    bfloat16 policy (compute and buffer dtypes) it runs steadily too.  Without the FSDP
    port, torch's wrapper fails under the xla process group."""
    source = output_bytes(convert_source((FIXTURES / CASE.script).read_bytes())).decode()
    assert "xla_fsdp.XlaFullyShardedDataParallel(" in source and "optimizer.step()" in source
    assert "xm.optimizer_step" not in source and "compute_dtype=torch.bfloat16 if args.bf16 else None" in source

    bf16 = Executed(CASE.script, args=("--bf16",), steps_per_epoch=CASE.steps_per_epoch, launched=True)
    run = run_xla(bf16, tmp_path / "bf16")
    assert not xla_problems(run) and not steady_problems(run, bf16), run.compiles
    assert all(math.isfinite(loss) for loss in run.losses) and len(run.losses) == 16

    unported, result = run_unported(CASE, tmp_path / "unported", "XLA611")
    assert "FSDP(" in (unported / CASE.script).read_text()
    assert result.returncode != 0 and "does not have a corresponding backend" in result.stderr, result.stderr[-2000:]
