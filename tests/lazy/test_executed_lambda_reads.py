"""Executed: an inference loop whose every iteration reads its outputs to the host through a lambda a
helper applies (torchbeast's ``outputs = nest.map(lambda t: t.cpu(), outputs)``), on torch_xla 2.9
(CPU).  Ported, XLA303 adds no barrier: the ``.cpu()`` in the lambda runs the iteration's graph, so
the outputs match the eager original's and every graph is one batch long.  The negative control: the
same loop whose lambda keeps the outputs on the device (summed across iterations) makes one graph of
all the batches, many times larger, unless the barrier XLA303 then adds ends each iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import eager_and_converted_script, largest_graph, loss_problems

pytestmark = pytest.mark.executed

SERVE = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def tree_map(fn, outputs):
    return {key: fn(value) for key, value in outputs.items()}


def serve(model, batches):
    total = 0.0
    with torch.no_grad():
        for x in batches:
            out = model(x.to(device))
            outputs = tree_map(lambda t: t.cpu(), {"policy": out.softmax(-1), "value": out.sum(-1)})
            total += float(outputs["value"].sum())
    return total


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8)).to(device)
    batches = [torch.randn(4, 8) for _ in range(30)]
    print(f"step 0 loss {serve(model, batches)}")


if __name__ == "__main__":
    main()
"""
# The control: the lambda keeps the outputs on the device, summed across the iterations.
KEPT = (
    SERVE.replace("lambda t: t.cpu()", "lambda t: t * 1")
    .replace('total += float(outputs["value"].sum())', 'total = outputs["value"].sum() + total')
    .replace("    return total\n", "    return float(total)\n")
)


def test_a_lambda_read_needs_no_barrier_and_serves_like_the_original(tmp_path: Path) -> None:
    code, got, want = eager_and_converted_script(tmp_path / "reads", "serve.py", SERVE)
    assert "torch_xla.sync()" not in code
    assert len(want.losses) == 1
    assert not loss_problems(got, want)
    kept_code, kept, kept_want = eager_and_converted_script(
        tmp_path / "kept", "serve.py", KEPT, RuleSelection(ignore=("XLA303", "XLA704"))
    )
    assert "torch_xla.sync()" not in kept_code
    assert not loss_problems(kept, kept_want)
    assert largest_graph(kept) > 10 * largest_graph(got), (largest_graph(kept), largest_graph(got))
    barrier_code, _, _ = eager_and_converted_script(tmp_path / "barrier", "serve.py", KEPT)
    assert "            torch_xla.sync()\n    return float(total)" in barrier_code
