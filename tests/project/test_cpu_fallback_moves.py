"""A `.cuda()` that a ``try`` hands straight to another call, whose handler falls back to the CPU
(``try: torch.sort(scores.cuda())`` / ``except: torch.sort(scores)``, held-out list 23, KGAT's
metrics): on an XLA host the move raises and the fallback runs, so the original is right there.
A single-file run of the training script says nothing of it (XLA003: no "it crashes"), and the run
that converts the helper's module leaves it as it is (no XLA102); a handler that raises again is no
fallback, and stays reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import project_reports, script_findings

TARGETS = ["2.9", "sagemaker"]

METRICS = """\
import torch


def top_k(scores, k):
    try:
        _, order = torch.sort(scores.cuda(), descending=True)
    except:
        _, order = torch.sort(scores, descending=True)
    return order[:k]
"""

TRAIN = """\
import torch
import torch.nn as nn

from metrics import top_k

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(2, 4)]:
    loss = model(x).sum()
    loss.backward()
    opt.step()
print(top_k(model(torch.randn(3, 4))[:, 0], 2))
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_says_nothing_of_a_move_with_a_cpu_fallback(tmp_path: Path, target: str) -> None:
    assert script_findings(tmp_path, {"metrics.py": METRICS, "train.py": TRAIN}, target, "XLA003") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_handler_that_raises_again_is_no_fallback(tmp_path: Path, target: str) -> None:
    metrics = METRICS.replace("_, order = torch.sort(scores, descending=True)", "raise")
    found = script_findings(tmp_path, {"metrics.py": metrics, "train.py": TRAIN}, target, "XLA003")
    assert [line for line, _ in found] == [4], found
    assert "`top_k` has `scores.cuda()`" in found[0][1], found


@pytest.mark.parametrize("target", TARGETS)
def test_the_whole_run_leaves_the_move_as_it_is(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path, {"metrics.py": METRICS, "train.py": TRAIN}, target, ["metrics.py", "train.py"])
    assert not [f for f in reports["metrics.py"].findings if f.rule == "XLA102"], reports["metrics.py"].findings
