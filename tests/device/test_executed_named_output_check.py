"""Executed: a mask built on the host and moved only if the tensor it masks is on the GPU
(``if output.is_cuda: mask = mask.cuda()``, kospeech's MaskCNN), where the tensor is named
``output``.  The name holds the letters "tpu", and the tool took a branch on it for a branch on
XLA availability, leaving it as written: on XLA ``is_cuda`` is False, the mask stays on the CPU
and ``masked_fill`` raises.  Now the check is ported (XLA117) and the move with it (XLA102): the
converted script trains on XLA like the original's eager run.  The negative control puts the
author's ``is_cuda`` back: the first forward raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, barrier_per_step_problems, eager_and_converted_runs, run_script

pytestmark = pytest.mark.executed

STEPS = 8

TRAIN = f"""\
import torch
import torch.nn as nn


def masked(output):
    mask = torch.zeros(output.size(), dtype=torch.bool)
    mask[:, 0] = True
    if output.is_cuda:
        mask = mask.cuda()
    return output.masked_fill(mask, 0)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.Linear(4, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range({STEPS}):
        x, y = torch.randn(8, 4), torch.randn(8, 3)
        loss = nn.functional.mse_loss(masked(model(x.to(device))), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    main()
"""

PORTED = 'if output.device.type == "xla":'


def test_a_check_on_a_tensor_named_output_is_ported_and_the_mask_moves(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "named_output", {"train.py": TRAIN}, PORTED)
    script = run.folder / "train.py"
    assert "mask = mask.to(torch_xla.device())" in script.read_text()
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    # The negative control: the author's check keeps the mask on the CPU.
    script.write_text(script.read_text().replace(PORTED, "if output.is_cuda:"))
    failed = run_script(run.folder, "train.py", check=False)
    assert failed.returncode != 0 and "Expected XLA tensor" in failed.stderr, failed.stderr[-2000:]
