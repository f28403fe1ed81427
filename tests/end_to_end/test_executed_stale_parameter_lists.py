"""Executed: parameter lists a module class collects in ``__init__`` (GCNII's ``self.params1 =
list(self.convs.parameters())``), and an optimizer the script builds over them after it moved
the model, on torch_xla 2.9 (CPU).  The tool reports it (XLA203) and leaves the code: as
converted, the optimizer steps the CPU Parameters the move replaced, nothing trains and the
losses part from the eager original's (the error's premise).  With the fix the finding names
(the lists collected again after the move), the losses are the original's and every stepped
parameter is on the XLA device: the fix works, and the check above can tell the two apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Run, eager_and_converted_runs, loss_problems, optimizer_problems, xla_problems
from tests.support.training_programs import training_script

pytestmark = pytest.mark.executed

STEPS = 6
TRAIN = training_script(
    STEPS,
    classes="""\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Linear(4, 8), nn.Linear(8, 8)])
        self.fcs = nn.ModuleList([nn.Linear(8, 1)])
        self.params1 = list(self.convs.parameters())
        self.params2 = list(self.fcs.parameters())

    def forward(self, x):
        for layer in [*self.convs, *self.fcs]:
            x = torch.relu(layer(x)) if layer is not self.fcs[0] else layer(x)
        return x
""",
    setup="""\
    model = Net().to(device)
    optimizer = torch.optim.SGD(
        [{"params": model.params1, "weight_decay": 0.01}, {"params": model.params2}], lr=0.2
    )
""",
    batch=16,
)
PORTED = "    optimizer = torch.optim.SGD(\n"
FIXED = (
    "    model.params1 = list(model.convs.parameters())\n"
    "    model.params2 = list(model.fcs.parameters())\n"
    "    optimizer = torch.optim.SGD(\n"
)


def _runs(tmp_path: Path, fixed: bool) -> tuple[Run, Run]:
    return eager_and_converted_runs(tmp_path, "lists", {"train.py": TRAIN}, PORTED, FIXED if fixed else None)


def test_as_converted_the_optimizer_steps_stale_cpu_copies(tmp_path: Path) -> None:
    """What XLA203 reports: the run trains nothing on XLA."""
    eager, run = _runs(tmp_path, fixed=False)
    assert len(eager.losses) == STEPS
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []


def test_lists_collected_again_after_the_move_train(tmp_path: Path) -> None:
    """The fix the finding names: the losses are the original's, on the XLA device."""
    eager, run = _runs(tmp_path, fixed=True)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []
