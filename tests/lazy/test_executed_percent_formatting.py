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

from tests.support.executed import Run, converted_project, loss_problems, run_script, xla_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 6
TRAIN = f"""\
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range({STEPS}):
        x = torch.randn(8, 4)
        loss = model(x.to(device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step %d loss %.6f" % (step, loss))


if __name__ == "__main__":
    main()
"""
PORTED = (
    '        xm.add_step_closure(lambda step, loss: print("step %d loss %.6f" % (step, loss)), args=(step, loss))\n'
)
FORMATTED_FIRST = (
    '        xm.add_step_closure(lambda value: print(value), args=("step %d loss %.6f" % (step, loss),))\n'
)


def _runs(tmp_path: Path, formatted_first: bool) -> tuple[Run, Run]:
    eager = run_script(write_project(tmp_path / "eager", "logs", {"train.py": TRAIN}), "train.py", on_xla=False)
    folder = converted_project(tmp_path / "xla", "logs", {"train.py": TRAIN})
    converted = (folder / "train.py").read_text()
    assert PORTED in converted, converted
    if formatted_first:
        (folder / "train.py").write_text(converted.replace(PORTED, FORMATTED_FIRST))
    return eager, run_script(folder, "train.py")


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
