"""A batch handed to a helper of another module that moves its tensors to the device in place
(``for key, val in batch.items(): batch[key] = val.cuda()``) before a model wrapped in DDP with
device_ids takes it: the port drops the device_ids, but the helper, ported too, moves the batch,
so XLA116 has nothing to say.  A helper called only after the forward, or one that moves
nothing, leaves the batch on the CPU: XLA116 stays, in a run on the project and in a
single-file run of the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

HELPERS = """\
import numpy as np
import torch


def to_device(batch):
    for key, val in batch.items():
        if not isinstance(val, np.ndarray):
            continue
        batch[key] = torch.from_numpy(val).float().cuda()
"""
# A helper that makes tensors of the arrays and moves nothing.
HELPERS_NO_MOVE = HELPERS.replace(".float().cuda()", ".float()")
EVALUATE = """\
import torch
from helpers import to_device


def evaluate(model, loader, rank):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    model.eval()
    results = []
    for i, batch in enumerate(loader):
        to_device(batch)
        with torch.no_grad():
            results.append(model(batch))
    return results
"""
# The helper runs after the forward: the forward gets the batch on the CPU.
EVALUATE_LATE = EVALUATE.replace(
    "        to_device(batch)\n        with torch.no_grad():\n            results.append(model(batch))\n",
    "        with torch.no_grad():\n            results.append(model(batch))\n        to_device(batch)\n",
)


def _batch_findings(folder: Path, names: list[str], target: str) -> list[tuple[str, int, str]]:
    found = unfixed_findings(folder, names, target).get("evaluate.py", [])
    return [(rule, line, message) for rule, line, message in found if rule == "XLA116"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["helpers.py", "evaluate.py"], ["evaluate.py"]], ids=["project", "single"])
def test_a_helper_that_moves_the_batch_in_place_moves_it(tmp_path: Path, target: str, names: list[str]) -> None:
    folder = write_project(tmp_path / "p", "p", {"helpers.py": HELPERS, "evaluate.py": EVALUATE})
    assert _batch_findings(folder, names, target) == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("helpers", "evaluate", "line"),
    [(HELPERS_NO_MOVE, EVALUATE, 12), (HELPERS, EVALUATE_LATE, 11)],
    ids=["no-move", "after"],
)
def test_a_helper_that_does_not_move_it_first_leaves_it_on_the_cpu(
    tmp_path: Path, target: str, helpers: str, evaluate: str, line: int
) -> None:
    assert evaluate != EVALUATE or helpers != HELPERS  # (the variants differ from the moving shape)
    folder = write_project(tmp_path / "p", "p", {"helpers.py": helpers, "evaluate.py": evaluate})
    found = _batch_findings(folder, ["helpers.py", "evaluate.py"], target)
    assert [(rule, line) for rule, line, _ in found] == [("XLA116", line)]
    assert "`batch` reaches `model` on the CPU" in found[0][2]
