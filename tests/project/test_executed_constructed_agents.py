"""Executed: the loop that drives an agent's ``update`` (obligation 4), on torch_xla 2.9 (CPU).

The agent's class is looked up at run time (``algos.get_class(name)(...)``, a ``globals()`` lookup),
so the tool cannot tell it; ``update`` is a name Python's dicts define too, matched to the project's
stepping ``update`` only because a call the tool cannot tell built the receiver.  Converted, the
loop of train.py gets the step barrier and trains like the eager original, with no new graph after
the warm-up; converted without that barrier (XLA301 off), each step compiles a new, bigger graph:
the negative control."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import (
    XLA_RUNNER,
    Executed,
    Run,
    convert_folder,
    loss_problems,
    parse_run,
    run_command,
    run_environment,
    steady_problems,
    xla_problems,
)

pytestmark = pytest.mark.executed

ALGOS = """\
import torch
import torch.nn.functional as F


class Regressor:
    def __init__(self, device, lr):
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=lr)

    def update(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def get_class(name):
    return globals()[name]
"""

TRAIN = """\
import torch

from pkg import algos


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    algo = algos.get_class("Regressor")(device, 0.05)
    xs, ys = torch.randn(48, 4), torch.randn(48, 1)
    for step in range(18):
        i = step % 6
        loss = algo.update(xs[i * 8 : i * 8 + 8].to(device), ys[i * 8 : i * 8 + 8].to(device))
        print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    main()
"""

CASE = Executed("train.py", steps_per_epoch=6)


def _project(folder: Path) -> Path:
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "algos.py").write_text(ALGOS)
    (folder / "train.py").write_text(TRAIN)
    return folder


def _xla_run(folder: Path, selection: RuleSelection | None = None) -> tuple[str, Run]:
    convert_folder(_project(folder), selection)
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    return (folder / "train.py").read_text(), parse_run(output, folder)


def test_a_looked_up_agents_update_gets_its_barrier_in_the_loop_and_trains_like_the_original(tmp_path: Path) -> None:
    eager = _project(tmp_path / "eager")
    want = parse_run(run_command([sys.executable, "train.py"], eager, run_environment()), eager)
    code, got = _xla_run(tmp_path / "ported")
    assert "        torch_xla.sync()\n" in code
    assert len(want.losses) == 18
    assert not loss_problems(got, want)
    assert not xla_problems(got)
    assert not steady_problems(got, CASE)


def test_without_that_barrier_each_update_compiles_a_new_graph(tmp_path: Path) -> None:
    eager = _project(tmp_path / "eager")
    want = parse_run(run_command([sys.executable, "train.py"], eager, run_environment()), eager)
    code, got = _xla_run(tmp_path / "unported", RuleSelection(ignore=("XLA301",)))
    assert "torch_xla.sync()" not in code
    assert not loss_problems(got, want)
    assert steady_problems(got, CASE)
