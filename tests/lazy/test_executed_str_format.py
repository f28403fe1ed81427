"""Executed: a training loop that logs its loss through ``str.format`` or the builtin
``format`` (``print("step {} loss {:.6f}".format(step, loss))``), on torch_xla 2.9 (CPU).  XLA701
moves the print into a step closure with the arguments passed in, so the formatting, which reads
the tensor, runs after the step's graph: the converted script prints the eager original's losses
with one graph run per step.  The negative control, the print left in the step (the port's old
form): the same losses, but the formatting reads the loss during the step, an extra graph run
per step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, xla_problems
from tests.support.training_programs import logged_loss_loop

pytestmark = pytest.mark.executed

STEPS = 6
LOGS = {
    "str.format": (
        'print("step {} loss {:.6f}".format(step, loss))',
        'xm.add_step_closure(lambda step, loss: print("step {} loss {:.6f}".format(step, loss)), args=(step, loss))',
    ),
    "format": (
        'print(f"step {step} loss", format(loss, ".6f"))',
        'xm.add_step_closure(lambda value, loss: print(value, format(loss, ".6f")), args=(f"step {step} loss", loss))',
    ),
}


def _runs(tmp_path: Path, form: str, left_in_step: bool) -> tuple[Run, Run]:
    log, ported = LOGS[form]
    files = {"train.py": logged_loss_loop(log, STEPS)}
    return eager_and_converted_runs(tmp_path, "logs", files, ported, log if left_in_step else None)


@pytest.mark.parametrize("form", sorted(LOGS))
def test_the_formatting_runs_in_the_closure_after_the_steps_graph(tmp_path: Path, form: str) -> None:
    eager, run = _runs(tmp_path, form, left_in_step=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == STEPS, run.output


def test_a_format_left_in_the_step_reads_the_loss_there(tmp_path: Path) -> None:
    """The negative control: the same losses, an extra graph run per step."""
    eager, run = _runs(tmp_path, "str.format", left_in_step=True)
    assert loss_problems(run, eager) == []
    assert run.executions > STEPS, run.output
