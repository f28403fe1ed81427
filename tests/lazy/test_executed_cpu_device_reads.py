"""Executed: an evaluation loop that copies every output to the host through a name bound to the
CPU device (FCOS's ``cpu_device = torch.device("cpu")``, ``output = [o.to(cpu_device) for o in
output]``) and keeps the copies, on torch_xla 2.9 (CPU).  The copy runs in every iteration, so each
iteration's graph is one batch long: the port adds no barrier (no XLA303), and the converted loop
gives the eager original's values with no new graph after the first pass.  The negative control:
the same loop keeping its outputs on the device (no copy) with XLA303 off makes one graph of all its
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
    results = {}
    cpu_device = torch.device("cpu")
    step = 0
    with torch.no_grad():
        for x, ids in batches:
            output = model(x.to(device)).softmax(1)
            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids.tolist(), output))
            print(f"step {step} loss {sum(float(o.max()) for o in output) / len(output)}")
            step += 1
    return results
"""
    + EVALUATION_MAIN
)

# No copy per iteration: the outputs stay on the device across the passes, read once at the end.
KEPT = (
    EVALUATE.replace(
        """            output = [o.to(cpu_device) for o in output]
            results.update(zip(ids.tolist(), output))
            print(f"step {step} loss {sum(float(o.max()) for o in output) / len(output)}")
""",
        """            kept.append(output.max(1).values.mean())
""",
    )
    .replace("def evaluate(model, batches):", "def evaluate(model, batches, kept):")
    .replace("evaluate(model, batches)\n", "evaluate(model, batches, kept)\n    print(sum(kept).item())\n")
    .replace("    torch.manual_seed(0)\n", "    torch.manual_seed(0)\n    kept = []\n")
)


def test_a_loop_that_copies_to_a_name_bound_to_the_cpu_gets_no_barrier_and_reaches_a_steady_state(
    tmp_path: Path,
) -> None:
    problems = evaluation_problems(tmp_path, EVALUATE, KEPT)
    assert not problems, problems
