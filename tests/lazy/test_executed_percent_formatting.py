"""Executed: a training loop that logs its loss through ``%`` formatting (``print("step %d loss
%.6f" % (step, loss))``), on torch_xla 2.9 (CPU).  XLA701 moves the print into a step closure
with the operands passed in, so the formatting, which reads the tensor, runs in the closure
after the step's graph: the converted script prints the eager original's losses with one graph
run per step.  The negative control, the closure handed the string formatted before the
barrier (the port's old form): the same losses, but the formatting reads the loss during the
step, an extra graph run per step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, xla_problems
from tests.support.training_programs import logged_loss_loop

pytestmark = pytest.mark.executed

STEPS = 6
LOG = 'print("step %d loss %.6f" % (step, loss))'
PORTED = 'xm.add_step_closure(lambda step, loss: print("step %d loss %.6f" % (step, loss)), args=(step, loss))'
FORMATTED_FIRST = 'xm.add_step_closure(lambda value: print(value), args=("step %d loss %.6f" % (step, loss),))'


def _runs(tmp_path: Path, formatted_first: bool) -> tuple[Run, Run]:
    files = {"train.py": logged_loss_loop(LOG, STEPS)}
    return eager_and_converted_runs(tmp_path, "logs", files, PORTED, FORMATTED_FIRST if formatted_first else None)


def test_the_formatting_runs_in_the_closure_after_the_steps_graph(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, formatted_first=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == STEPS, run.output


def test_a_string_formatted_before_the_barrier_reads_the_loss_in_the_step(tmp_path: Path) -> None:
    """The negative control: the same losses, an extra graph run per step."""
    eager, run = _runs(tmp_path, formatted_first=True)
    assert loss_problems(run, eager) == []
    assert run.executions > STEPS, run.output
