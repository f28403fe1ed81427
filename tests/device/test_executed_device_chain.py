"""Executed: the device of an availability chain (``if cuda: ... elif mps: ... else: cpu``),
which the port folds to the XLA device, is the XLA device of the first run's XLA203 too: the
optimizer built before ``model.to(device)`` is given the moved model, and the converted script
trains on XLA.  The negative control, converted without XLA203, keeps the optimizer over the
CPU parameters that the move replaced: the model on the XLA device does not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

SCRIPT = """\
import torch

if torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.to(device)
before = model.weight.detach().cpu().clone()
for step in range(4):
    optimizer.zero_grad()
    model(torch.randn(8, 4).to(device)).pow(2).mean().backward()
    optimizer.step()
changed = not torch.equal(before, model.weight.detach().cpu())
print(f"trained {model.weight.device.type} changed {changed}")
"""


def _run(folder: Path, selection: RuleSelection | None) -> str:
    return run_script(converted_project(folder, "chain", {"train.py": SCRIPT}, selection), "train.py").output


def test_the_optimizer_holds_the_moved_model_and_the_script_trains_on_xla(tmp_path: Path) -> None:
    assert "trained xla changed True" in _run(tmp_path / "ported", None)


def test_without_the_early_move_the_model_on_xla_trains_nothing(tmp_path: Path) -> None:
    assert "trained xla changed False" in _run(tmp_path / "control", RuleSelection(ignore=("XLA203",)))
