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

from tests.support.executed import Run, converted_project, loss_problems, run_script, xla_problems
from tests.support.projects import write_project

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


def _train(log: str) -> str:
    return f"""\
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
        {log}


if __name__ == "__main__":
    main()
"""


def _runs(tmp_path: Path, form: str, left_in_step: bool) -> tuple[Run, Run]:
    log, ported = LOGS[form]
    train = _train(log)
    eager = run_script(write_project(tmp_path / "eager", "logs", {"train.py": train}), "train.py", on_xla=False)
    folder = converted_project(tmp_path / "xla", "logs", {"train.py": train})
    converted = (folder / "train.py").read_text()
    assert ported in converted, converted
    if left_in_step:
        (folder / "train.py").write_text(converted.replace(ported, log))
    return eager, run_script(folder, "train.py")


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
