"""Executed: an evaluation loop whose nested per-sample loop reads every rank to the host
(``(argsort[i] == target[i]).nonzero().item()``, KnowledgeGraphEmbedding's ``test_step``), on
torch_xla 2.9 (CPU).  The read runs in every iteration, so each iteration's graph is one batch long:
the port adds no barrier (no XLA303), and the converted loop gives the eager original's ranks with
no new graph after the first pass.  The negative control: the same loop keeping its scores on the
device (``kept.append(...)``, no read per iteration) with XLA303 off makes one graph of all its
iterations."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import EVALUATION_MAIN, evaluation_problems

pytestmark = pytest.mark.executed

EVALUATE = (
    """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def evaluate(model, batches):
    step = 0
    with torch.no_grad():
        for x, target in batches:
            x, target = x.to(device), target.to(device)
            argsort = torch.argsort(model(x), dim=1, descending=True)
            ranks = []
            for i in range(x.size(0)):
                ranks.append(1 + (argsort[i, :] == target[i]).nonzero().item())
            print(f"step {step} loss {sum(1.0 / r for r in ranks) / len(ranks)}")
            step += 1
"""
    + EVALUATION_MAIN
)

# No read per iteration: the scores stay on the device across the passes, read once at the end.
KEPT = (
    EVALUATE.replace(
        """            ranks = []
            for i in range(x.size(0)):
                ranks.append(1 + (argsort[i, :] == target[i]).nonzero().item())
            print(f"step {step} loss {sum(1.0 / r for r in ranks) / len(ranks)}")
""",
        """            kept.append(argsort[:, 0].float().mean())
""",
    )
    .replace("def evaluate(model, batches):", "def evaluate(model, batches, kept):")
    .replace("evaluate(model, batches)\n", "evaluate(model, batches, kept)\n    print(sum(kept).item())\n")
    .replace("    torch.manual_seed(0)\n", "    torch.manual_seed(0)\n    kept = []\n")
)


def test_a_loop_that_reads_every_rank_to_the_host_gets_no_barrier_and_reaches_a_steady_state(tmp_path: Path) -> None:
    # The negative control: the scores kept on the device with no barrier (XLA303 off) make one
    # graph of every iteration of the three passes, many times the largest graph of the loop that reads.
    problems = evaluation_problems(tmp_path, EVALUATE, KEPT)
    assert not problems, problems
