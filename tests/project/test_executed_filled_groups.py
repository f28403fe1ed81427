"""Held-out list 22 (faster-rcnn.pytorch, O2): an optimizer built over parameter groups filled in a
loop over ``dict(model.named_parameters()).items()``, for a model built by a class of another project
module that the tool does not know as a module class (``vgg16``, whose bases are project classes), before
``model.to(device)``.  On torch_xla 2.9 (CPU) the move replaces the model's parameters, so the optimizer
steps stale CPU copies and the model trains nothing: the converted script's losses part from the eager
original's.  XLA213 reports the optimizer in a whole-project run and in a run of train.py alone (the
code stays as it is: the tool does not rewrite loop-filled groups).  The negative control, the move
put before the groups are collected (what the message asks for): the optimizer steps the XLA
parameters and the losses are the original's."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.targets import DEFAULT_TARGET
from tests.support.executed import Run, eager_and_converted_runs, loss_problems, optimizer_problems, xla_problems
from tests.support.projects import script_findings, unfixed_findings, write_project
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
SETUP = """\
    model = vgg16()
    params = []
    for key, value in dict(model.named_parameters()).items():
        if value.requires_grad:
            params += [{"params": [value], "lr": 0.5}]
    optimizer = torch.optim.SGD(params, momentum=0.0)
    model.to(device)
"""
TRAIN = "from nets import vgg16\n" + training_script(STEPS, setup=SETUP, batch=16)
FILES = {"nets.py": NETS, "train.py": TRAIN}
EARLY = "    model = vgg16()\n    params = []\n"
MOVED_FIRST = "    model = vgg16()\n    model.to(torch_xla.device())\n    params = []\n"
MESSAGE = "the optimizer's parameters come from `params`, filled in a loop over `model.named_parameters()`"


def _runs(tmp_path: Path, moved_first: bool) -> tuple[Run, Run]:
    return eager_and_converted_runs(tmp_path, "groups", FILES, EARLY, MOVED_FIRST if moved_first else None)


def test_both_runs_report_the_groups(tmp_path: Path) -> None:
    write_project(tmp_path / "whole", "groups", FILES)
    whole = unfixed_findings(tmp_path / "whole", ["train.py", "nets.py"], DEFAULT_TARGET)["train.py"]
    alone = script_findings(tmp_path / "alone", FILES, DEFAULT_TARGET, "XLA213")
    optimizer_line = TRAIN.splitlines().index('    optimizer = torch.optim.SGD(params, momentum=0.0)') + 1
    assert [(line, MESSAGE in message) for code, line, message in whole if code == "XLA213"] == [
        (optimizer_line, True)
    ]
    assert [(line, MESSAGE in message) for line, message in alone] == [(optimizer_line, True)]


@pytest.mark.executed
def test_groups_built_before_the_move_train_nothing(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, moved_first=False)
    assert len(eager.losses) == STEPS
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []


@pytest.mark.executed
def test_groups_built_after_the_move_train(tmp_path: Path) -> None:
    """The negative control: the model moved before its groups are collected."""
    eager, run = _runs(tmp_path, moved_first=True)
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []
