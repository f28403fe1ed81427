"""Executed: an algorithm class looked up by its name in another module (``return
globals()[name]``), whose ``__init__`` builds its optimizer over its own parameters, moved to the
device after it is built. On torch_xla the move replaces the Parameter objects, so the converted
project's optimizer steps the stale CPU copies and the loss never moves: XLA203 reports the move.
The negative control rebuilds the optimizer after the move: no XLA203, and it trains on XLA like
the eager original (same losses, its optimizer stepping XLA parameters). Both converted runs end
each step with the loop's barrier and compile no new graph after the warm-up; the graph count's
own negative control takes that barrier out, and each step then compiles a new, bigger graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import (
    STEADY_STEPS,
    WARMUP_STEPS,
    Executed,
    Run,
    convert_folder,
    optimizer_problems,
    run_script,
    steady_problems,
    training_problems,
    unbarriered_problems,
    xla_problems,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

ALGORITHMS = """\
import torch
from torch import nn


def get_algorithm_class(name):
    return globals()[name]


class ERM(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.network = nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=lr)

    def update(self, x):
        loss = self.network(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class Mixup(ERM):
    pass
"""

# Enough steps to see a steady state after the warm-up.
STEPS = WARMUP_STEPS + STEADY_STEPS + 2

TRAIN = f"""\
import torch

import algorithms


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    algorithm_class = algorithms.get_algorithm_class("Mixup")
    algorithm = algorithm_class(0.5)
    algorithm.to(device)
{{rebuild}}    x = torch.randn(16, 4).to(device)
    for step in range({STEPS}):
        print(f"step {{{{step}}}} loss {{{{algorithm.update(x)}}}}")
    print(f"network on {{{{algorithm.network.weight.device.type}}}}")


if __name__ == "__main__":
    main()
"""

REBUILT = "    algorithm.optimizer = torch.optim.SGD(algorithm.network.parameters(), lr=0.5)\n"
BARRIER = "        torch_xla.sync()\n"
CASE = Executed("train.py")


def _files(rebuild: str) -> dict[str, str]:
    return {"algorithms.py": ALGORITHMS, "train.py": TRAIN.format(rebuild=rebuild)}


def _project(folder: Path, rebuild: str) -> list[str]:
    """The project written; its XLA203 findings; then converted."""
    write_project(folder, "lookups", _files(rebuild))
    job = Job("check", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in ("train.py", "algorithms.py")], workers=1)
    findings = [f"{f.line}: {f.message}" for r in reports for f in r.findings if f.rule == "XLA203"]
    convert_folder(folder)
    assert BARRIER in (folder / "train.py").read_text()
    return findings


def _eager(tmp_path: Path) -> Run:
    """The original on the CPU, where the move keeps the Parameter objects: it trains."""
    eager = run_script(write_project(tmp_path / "eager", "lookups", _files("")), "train.py", on_xla=False)
    assert len(eager.losses) == STEPS and eager.losses[-1] < eager.losses[0] * 0.9, eager.output
    assert "network on cpu" in eager.output
    return eager


def test_a_looked_up_class_moved_after_init_trains_nothing_on_xla_as_xla203_says(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = tmp_path / "stale"
    findings = _project(folder, "")
    assert [finding.split(" moves ")[0] for finding in findings] == ["11: `algorithm.to(device)`"], findings
    stale = run_script(folder, "train.py")
    assert "network on xla" in stale.output
    assert len(stale.losses) == STEPS and len(set(stale.losses)) == 1, stale.output  # the loss never moves
    assert stale.losses[0] == pytest.approx(eager.losses[0], rel=1e-4)
    assert optimizer_problems(stale), stale.output  # its optimizer stepped the CPU copies
    assert not xla_problems(stale)
    problems = steady_problems(stale, CASE)
    assert not problems, problems


def test_the_optimizer_rebuilt_after_the_move_trains_on_xla_with_no_xla203(tmp_path: Path) -> None:
    eager = _eager(tmp_path)  # a rebuilt SGD without momentum steps as the original's does
    folder = tmp_path / "rebuilt"
    assert _project(folder, REBUILT) == []
    rebuilt = run_script(folder, "train.py")
    assert "network on xla" in rebuilt.output
    problems = training_problems(rebuilt, eager, CASE)
    assert not problems, problems


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    """The graph count's negative control: the rebuilt project converted, its barrier taken out.
    ``update`` reads only the loss to the host, so each step's graph holds every update before it."""
    eager = _eager(tmp_path)
    folder = tmp_path / "no-barrier"
    _project(folder, REBUILT)
    train = folder / "train.py"
    train.write_text(train.read_text().replace(BARRIER, ""))
    problems = unbarriered_problems(run_script(folder, "train.py"), eager, CASE)
    assert not problems, problems
