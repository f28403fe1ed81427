"""Executed: an optimizer built over parameters collected in steps (``params = list(...)``, then
``params += list(...)`` and ``params.extend(...)``) before the model moves, on torch_xla 2.9
(CPU).  XLA203 moves each submodule first where its parameters are collected, so the optimizer
holds the parameters the model trains with: the converted script's losses are the eager
original's, every stepped parameter on the XLA device.  The negative control, the port's old
form (only the first part moved): the optimizer steps the other parts' stale CPU copies, which
the model no longer uses, and the losses part from the original's."""

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
        self.encoder = nn.Linear(4, 8)
        self.decoder = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.decoder(torch.relu(self.encoder(x)))))
""",
    setup="""\
    model = Net()
    params = list(model.encoder.parameters())
    params += list(model.decoder.parameters())
    params.extend(model.head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.5)
    model.to(device)
""",
    batch=16,
)
PORTED = (
    "    params += list(model.decoder.to(torch_xla.device()).parameters())\n"
    "    params.extend(model.head.to(torch_xla.device()).parameters())\n"
)
OLD_PORT = "    params += list(model.decoder.parameters())\n    params.extend(model.head.parameters())\n"


def _runs(tmp_path: Path, old_port: bool) -> tuple[Run, Run]:
    return eager_and_converted_runs(tmp_path, "steps", {"train.py": TRAIN}, PORTED, OLD_PORT if old_port else None)


def test_every_collected_part_moves_before_the_optimizer_holds_it(tmp_path: Path) -> None:
    eager, run = _runs(tmp_path, old_port=False)
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) == []


def test_parts_collected_unmoved_train_stale_copies(tmp_path: Path) -> None:
    """The negative control: the optimizer steps CPU copies of the decoder and head."""
    eager, run = _runs(tmp_path, old_port=True)
    assert optimizer_problems(run) != []
    assert loss_problems(run, eager) != []
