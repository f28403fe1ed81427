"""Executed: ``main`` builds its CUDA device from a ``--gpu`` index (``f"cuda:{args.gpu}"``) and hands
``args`` to a training function of the same file, which moves the batches to ``args.gpu`` (an
integer: cuda:N).  The port makes that move a move to the XLA device too (XLA103, following the
namespace into the function the builder hands it): the converted script trains on torch_xla 2.9
(CPU) like the original does on the CPU, with the checks of tests/support/executed.py.

Negative control: the converted script with the callee's move kept (``.to(args.gpu)``, as the port
left it when an index was only local to the function that builds the string) fails at the first
batch: an integer device is CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import argparse

import torch
import torch.nn as nn


def train(args, model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(batches):
        x, y = x.to(args.gpu), y.to(args.gpu)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    model = nn.Linear(4, 2).to(f"cuda:{{args.gpu}}")
    train(args, model, batches)


if __name__ == "__main__":
    main()
"""
MOVE = "        x, y = x.to(args.gpu), y.to(args.gpu)\n"
PORTED_MOVE = "        x, y = x.to(torch_xla.device()), y.to(torch_xla.device())\n"
EAGER = TRAIN.replace('f"cuda:{args.gpu}"', '"cpu"').replace(MOVE, '        x, y = x.to("cpu"), y.to("cpu")\n')


def test_the_handed_index_becomes_the_xla_device_and_the_script_trains(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "handed", {"train.py": EAGER}), "train.py", on_xla=False)
    folder = converted_project(tmp_path / "ported", "handed", {"train.py": TRAIN})
    ported = (folder / "train.py").read_text()
    assert PORTED_MOVE in ported and "args.gpu)" not in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_move_kept_the_script_fails_without_cuda(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "kept", "handed", {"train.py": TRAIN})
    script = folder / "train.py"
    ported = script.read_text()
    assert PORTED_MOVE in ported
    script.write_text(ported.replace(PORTED_MOVE, MOVE))
    run = run_script(folder, "train.py", check=False)
    assert run.returncode != 0
    assert "Found no NVIDIA driver" in run.stderr
    assert "step 0 loss" not in run.output
