"""Executed: an evaluation loop whose meters accumulate what a helper of the file returns as host
numbers (torchvision's and CvT's ``accuracy``: ``res.append(correct_k.mul_(100.0 / n).item())``), on
torch_xla 2.9 (CPU).  Nothing on the device survives an iteration, so the port adds no barrier (no
XLA303), and the converted loop gives the eager original's accuracies with no new graph after the
first pass.  The negative control: the same helper returning the accuracies on the device, with
XLA303 off, makes one graph of all the iterations that the meters' sums carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.training.rules.meter_loop_cases import ACCURACY
from tests.support.executed import EVALUATION_MAIN, evaluation_problems

pytestmark = pytest.mark.executed

# XLA303's accuracy helper (torchvision's, CvT's) in an evaluation script of its own.
EVALUATE = (
    """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


"""
    + ACCURACY
    + """

class Meter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, val, n):
        self.sum += val * n
        self.count += n


def evaluate(model, batches):
    top1, top3 = Meter(), Meter()
    step = 0
    with torch.no_grad():
        for x, target in batches:
            x, target = x.to(device), target.to(device)
            output = model(x)
            acc1, acc3 = accuracy(output, target, (1, 3))
            top1.update(acc1, x.size(0))
            top3.update(acc3, x.size(0))
            print(f"step {step} loss {top1.sum / top1.count + top3.sum / top3.count}")
            step += 1
    return top1
"""
    + EVALUATION_MAIN
)

# The accuracies stay on the device: the meters' sums carry every iteration's graph, read once at the end.
ON_THE_DEVICE = (
    EVALUATE.replace(".mul_(100.0 / target.size(0)).item())", ".mul_(100.0 / target.size(0)))")
    .replace('            print(f"step {step} loss {top1.sum / top1.count + top3.sum / top3.count}")\n', "")
    .replace(
        "    for epoch in range(3):\n        evaluate(model, batches)\n",
        "    total = sum(evaluate(model, batches).sum for epoch in range(3))\n    print(float(total))\n",
    )
)


def test_meters_of_host_numbers_get_no_barrier_and_reach_a_steady_state(tmp_path: Path) -> None:
    assert ON_THE_DEVICE.count(".item()") == EVALUATE.count(".item()") - 1  # (the variant differs)
    # The negative control: the accuracies kept on the device with no barrier (XLA303 off) make one
    # graph of every iteration of the three passes, many times the largest graph of the loop.
    problems = evaluation_problems(tmp_path, EVALUATE, ON_THE_DEVICE)
    assert not problems, problems
