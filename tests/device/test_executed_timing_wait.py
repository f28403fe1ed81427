"""Executed: YOLOP's timing helper, ``torch.cuda.synchronize() if torch.cuda.is_available() else
None`` (a wait, no device pick), on torch_xla 2.9 (CPU).  XLA122 (info) makes it
``xm.wait_device_ops()``: the converted script trains on the XLA device like the eager original
(same losses, no new graph after the warm-up) with the wait in its timed loop.  The negative control
is the wait without its check and not ported (``torch.cuda.synchronize()``), which raises on a host
without CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, eager_and_converted_runs, run_script, training_problems

pytestmark = pytest.mark.executed

TRAIN = """\
import time

import torch
import torch.nn.functional as F


def time_synchronized():
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    return time.time()


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    for step in range(12):
        t0 = time_synchronized()
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        loss = F.mse_loss(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        elapsed = time_synchronized() - t0
        print(f"step {step} loss {loss.item()}")
        print(f"took {elapsed:.4f}")


if __name__ == "__main__":
    main()
"""
FILES = {"train.py": TRAIN}
CASE = Executed("train.py")
PORTED = "    xm.wait_device_ops()\n    return time.time()"


def test_the_timing_wait_waits_for_the_xla_device(tmp_path: Path) -> None:
    eager, got = eager_and_converted_runs(tmp_path, "timing", FILES, PORTED)
    problems = training_problems(got, eager, CASE)
    assert not problems, problems


def test_the_wait_unported_and_unchecked_raises(tmp_path: Path) -> None:
    script = converted_project(tmp_path / "xla", "timing", FILES) / "train.py"
    script.write_text(script.read_text().replace(PORTED, "    torch.cuda.synchronize()\n    return time.time()"))
    got = run_script(script.parent, "train.py", check=False)
    assert got.returncode != 0 and "torch.cuda.synchronize()" in got.stderr, got.stderr[-2000:]
