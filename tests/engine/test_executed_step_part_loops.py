"""Executed: a training iteration that backs each of its losses in a loop and steps each of its
optimizers in another (pydreamer's ``for loss in losses`` / ``for opt in optimizers`` with a
disabled gradient scaler), on torch_xla 2.9 (CPU).  The port ends the outer iteration with the
one barrier: the converted script trains like the eager original (same losses), one graph run
per step, no graph compiled after the warm-up.  The negative control, the port as it used to be
written (a barrier after each backward and after each optimizer's step, none at the end of the
iteration): the same losses, but four graphs run per step instead of one (and the last step's
loss print, a step closure after the last barrier, never runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    WARMUP_STEPS,
    convert_folder,
    eager_and_converted_script,
    loss_problems,
    run_script,
    xla_problems,
)

pytestmark = pytest.mark.executed

STEPS = 8
TRAIN = f"""\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
body = torch.nn.Linear(4, 8).to(device)
heads = [torch.nn.Linear(8, 1).to(device), torch.nn.Linear(8, 1).to(device)]
optimizers = [torch.optim.Adam(list(body.parameters()) + list(heads[0].parameters()), lr=0.01), torch.optim.Adam(heads[1].parameters(), lr=0.01)]
scaler = torch.cuda.amp.GradScaler(enabled=False)
data = [torch.randn(16, 4) for _ in range({STEPS})]
for step, batch in enumerate(data):
    x = batch.to(device)
    feats = body(x)
    losses = [heads[0](feats).pow(2).mean(), heads[1](feats.detach()).pow(2).mean()]
    for opt in optimizers:
        opt.zero_grad()
    for loss in losses:
        scaler.scale(loss).backward()
    for opt in optimizers:
        scaler.step(opt)
    scaler.update()
    print(f"step {{step}} loss {{losses[0].item() + losses[1].item()}}")
"""
BACKWARD = "        scaler.scale(loss).backward()\n"
STEP = "        scaler.step(opt)\n"


def test_one_barrier_ends_the_iteration_that_holds_every_part_of_the_step(tmp_path: Path) -> None:
    ported, run, eager = eager_and_converted_script(tmp_path, "train.py", TRAIN)
    assert ported.count("torch_xla.sync()") == 1, ported
    assert BACKWARD + "    for opt" in ported and STEP + "    scaler.update()" in ported, ported
    assert len(eager.losses) == STEPS
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == STEPS, run.output  # one graph per step
    assert run.compiles[-1] == run.compiles[WARMUP_STEPS - 1], run.compiles


def test_the_old_barriers_in_the_inner_loops_run_four_graphs_per_step(tmp_path: Path) -> None:
    """The negative control: c233071b's port, a barrier in each inner loop and none at the end."""
    folder = tmp_path / "ported"
    folder.mkdir()
    (folder / "train.py").write_text(TRAIN)
    convert_folder(folder)
    ported = (folder / "train.py").read_text()
    end = next(line for line in ported.splitlines(keepends=True) if line.strip() == "torch_xla.sync()")
    old = (
        ported.replace(end, "")
        .replace(BACKWARD, BACKWARD + "        torch_xla.sync()\n")
        .replace(STEP, STEP + "        torch_xla.sync()\n")
    )
    assert old.count("torch_xla.sync()") == 2, old
    (folder / "train.py").write_text(old)
    run = run_script(folder, "train.py")
    eager_folder = tmp_path / "eager"
    eager_folder.mkdir()
    (eager_folder / "train.py").write_text(TRAIN)
    eager = run_script(eager_folder, "train.py", on_xla=False)
    # The loss print after the steps is a step closure (it runs at the next barrier): the last
    # iteration reaches none after it, so its print never runs; the steps themselves are right.
    assert run.losses == pytest.approx(eager.losses[:-1], rel=1e-3, abs=1e-5)
    assert run.executions == 4 * STEPS, run.output  # 2 backward passes + 2 optimizer steps, each its own graph
