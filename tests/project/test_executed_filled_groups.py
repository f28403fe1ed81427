"""Held-out list 22 (faster-rcnn.pytorch, O2): an optimizer built over parameter groups filled in a
loop over ``dict(model.named_parameters()).items()``, for a model built by a class of another project
module that the tool does not know as a module class (``vgg16``, whose bases are project classes), before
``model.to(device)``, or the groups filled before the move and the optimizer built after it (the
groups hold the Parameters the move replaced).  XLA203 moves the model first in the loop's iterable, in a whole-project run and in a
run of train.py alone, so on torch_xla 2.9 (CPU) the optimizer steps the parameters the model trains
with: the converted script's losses are the eager original's.  The negative control, the port without
that move (as it was): the move replaces the model's parameters, the optimizer steps stale CPU copies,
the model trains nothing and the losses part from the original's."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.targets import DEFAULT_TARGET
from tests.support.executed import Run, eager_and_converted_runs, loss_problems, optimizer_problems, xla_problems
from tests.support.projects import project_reports
from tests.support.training_programs import training_script

STEPS = 6
NETS = """\
import torch
import torch.nn as nn


class _fasterRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)

    def forward(self, x):
        return self.head(torch.relu(self.hidden(x)))


class vgg16(_fasterRCNN):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 1)
"""
FILL = """\
    model = vgg16()
    params = []
    for key, value in dict(model.named_parameters()).items():
        if value.requires_grad:
            params += [{"params": [value], "lr": 0.5}]
"""
OPTIMIZER = "    optimizer = torch.optim.SGD(params, momentum=0.0)\n"
MOVE = "    model.to(device)\n"
# The optimizer built before the move, and built after it over groups filled before it.
SETUPS = {"optimizer-first": FILL + OPTIMIZER + MOVE, "move-between": FILL + MOVE + OPTIMIZER}
PORTED = "    for key, value in dict(model.to(torch_xla.device()).named_parameters()).items():\n"
OLD_PORT = "    for key, value in dict(model.named_parameters()).items():\n"


def _files(shape: str) -> dict[str, str]:
    return {
        "nets.py": NETS,
        "train.py": "from nets import vgg16\n" + training_script(STEPS, setup=SETUPS[shape], batch=16),
    }


def _runs(tmp_path: Path, shape: str, old_port: bool) -> tuple[Run, Run]:
    return eager_and_converted_runs(tmp_path, "groups", _files(shape), PORTED, OLD_PORT if old_port else None)


@pytest.mark.parametrize("shape", SETUPS)
def test_both_runs_move_the_model_first(tmp_path: Path, shape: str) -> None:
    files = _files(shape)
    train = files["train.py"]
    whole = project_reports(tmp_path / "whole", files, DEFAULT_TARGET, ["train.py", "nets.py"])["train.py"]
    alone = project_reports(tmp_path / "alone", {"train.py": train}, DEFAULT_TARGET, ["train.py"])["train.py"]
    loop_line = train.splitlines().index(OLD_PORT.rstrip("\n")) + 1
    for report in (whole, alone):
        assert [(f.line, f.fixed) for f in report.findings if f.rule in ("XLA203", "XLA213")] == [(loop_line, True)]


@pytest.mark.executed
@pytest.mark.parametrize("shape", SETUPS)
def test_groups_filled_from_the_moved_model_train(tmp_path: Path, shape: str) -> None:
    eager, run = _runs(tmp_path, shape, old_port=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []


@pytest.mark.executed
@pytest.mark.parametrize("shape", SETUPS)
def test_groups_built_before_the_move_train_nothing(tmp_path: Path, shape: str) -> None:
    """The negative control: the loop's move undone, the optimizer steps stale CPU copies."""
    eager, run = _runs(tmp_path, shape, old_port=True)
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []
