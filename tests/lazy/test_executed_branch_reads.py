"""Executed: an evaluation loop whose every iteration reads its loss to the host in one branch of an
``if``/``else`` or the other (IGMC's ``eval_loss``: ``if regression: loss += mse(...).item() else:
loss += nll(...).item()``), on torch_xla 2.9 (CPU).  Ported, XLA303 adds no barrier: the read in
either branch runs the iteration's graph, so the losses match the eager original's and every graph
is one batch long.  The negative control: the same loop with the read dropped from one branch (the
loss kept on the device there) makes one graph of all the batches, many times larger, unless the
barrier XLA303 then adds ends each iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import eager_and_converted_script, largest_graph, loss_problems

pytestmark = pytest.mark.executed

EVALUATE = """\
import torch
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def eval_loss(model, batches, regression):
    loss = 0
    for x, y in batches:
        with torch.no_grad():
            out = model(x.to(device))
        if regression:
            loss += F.mse_loss(out, y.to(device), reduction="sum").item()
        else:
            loss += F.l1_loss(out, y.to(device), reduction="sum").item()
    return loss


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8)).to(device)
    batches = [(torch.randn(4, 8), torch.randn(4, 8)) for _ in range(30)]
    for step, regression in enumerate((True, False)):
        print(f"step {step} loss {eval_loss(model, batches, regression)}")


if __name__ == "__main__":
    main()
"""
READ = '            loss += F.l1_loss(out, y.to(device), reduction="sum").item()\n'
KEPT_ON_DEVICE = '            loss = F.l1_loss(out, y.to(device), reduction="sum") + loss\n'


def test_a_read_in_every_branch_needs_no_barrier_and_evaluates_like_the_original(tmp_path: Path) -> None:
    code, got, want = eager_and_converted_script(tmp_path / "reads", "evaluate.py", EVALUATE)
    assert "torch_xla.sync()" not in code
    assert len(want.losses) == 2
    assert not loss_problems(got, want)
    # The negative control: one branch keeps its loss on the device; without a barrier (XLA303 off)
    # that branch's iterations make one graph of all the batches.
    device_sum = EVALUATE.replace(READ, KEPT_ON_DEVICE)
    kept_code, kept, kept_want = eager_and_converted_script(
        tmp_path / "kept", "evaluate.py", device_sum, RuleSelection(ignore=("XLA303",))
    )
    assert "torch_xla.sync()" not in kept_code
    assert not loss_problems(kept, kept_want)
    assert largest_graph(kept) > 10 * largest_graph(got), (largest_graph(kept), largest_graph(got))
    # ... and XLA303 sees it: the port ends each iteration with the barrier.
    barrier_code, _, _ = eager_and_converted_script(tmp_path / "barrier", "evaluate.py", device_sum)
    assert "        torch_xla.sync()\n    return loss" in barrier_code
