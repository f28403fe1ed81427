"""Executed: a project's optimizer wrapper stepped with a key (``MultiOptimizer.step(key)``,
``optimizer.step("enc")``), on torch_xla 2.9 (CPU), with the checks of
tests/support/executed.py.  The port keeps the keyed steps as written (XLA201 reports them)
and adds the loop's barrier: both networks train on XLA like the original in eager mode (same
losses), the optimizers step XLA parameters, and one barrier per step means one graph run per
step and no new graph after the warm-up.

Negative controls: the converted project without its barrier (the losses printed as the
original printed them) compiles a bigger graph at every step; the steps as the port used to
write them, the key passed on as the closure
(``xm.optimizer_step(optimizer, optimizer_args={"closure": "enc"})``), raise TypeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    Executed,
    Run,
    barrier_per_step_problems,
    converted_project,
    run_script,
    step_ends,
    unbarriered_problems,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

OPTIM_UTIL = """\
import torch


class MultiOptimizer:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def step(self, key=None):
        for k in [key] if key is not None else list(self.optimizers):
            self.optimizers[k].step()

    def zero_grad(self):
        for o in self.optimizers.values():
            o.zero_grad()


def build_optimizer(params_dict, lr):
    return MultiOptimizer({k: torch.optim.SGD(p, lr=lr) for k, p in params_dict.items()})
"""

STEPS = 10

TRAIN = f"""\
import torch
import torch.nn as nn

from optim_util import build_optimizer


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range({STEPS})]
    model = {{"enc": nn.Linear(4, 8).to(device), "dec": nn.Linear(8, 1).to(device)}}
    before = {{k: m.weight.detach().cpu().clone() for k, m in model.items()}}
    optimizer = build_optimizer({{k: m.parameters() for k, m in model.items()}}, lr=0.1)
    for step, (x, y) in enumerate(batches):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model["dec"](model["enc"](x)), y)
        loss.backward()
        optimizer.step("enc")
        optimizer.step("dec")
        print(f"step {{step}} loss {{loss.item()}}")
    for k, m in model.items():
        print(k, "trained", not torch.equal(before[k], m.weight.detach().cpu()), "on", m.weight.device.type)


if __name__ == "__main__":
    main()
"""

# The end of a step as the converted project writes it, and the same without the barrier.
PORTED_STEP_END, UNBARRIERED_STEP_END = step_ends(" " * 8)


FILES = {"optim_util.py": OPTIM_UTIL, "train.py": TRAIN}


def _eager(tmp_path: Path) -> Run:
    return run_script(write_project(tmp_path / "eager", "multiopt", FILES), "train.py", on_xla=False)


def test_keyed_steps_of_an_optimizer_wrapper_stay_and_both_networks_train_on_xla(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = converted_project(tmp_path / "ported", "multiopt", FILES)
    ported = (folder / "train.py").read_text()
    assert 'optimizer.step("enc")' in ported and PORTED_STEP_END in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    assert "enc trained True on xla" in run.output
    assert "dec trained True on xla" in run.output


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    """The graph count's negative control: the converted project without its barrier trains
    on XLA with the same losses, but each step's ``loss.item()`` runs a graph that holds every
    step before it: a new graph at every step, and the steady-state check sees it."""
    folder = converted_project(tmp_path / "no-barrier", "multiopt", FILES)
    train = folder / "train.py"
    train.write_text(train.read_text().replace(PORTED_STEP_END, UNBARRIERED_STEP_END))
    run = run_script(folder, "train.py")
    assert not unbarriered_problems(run, _eager(tmp_path), Executed("train.py"))


def test_with_the_key_passed_as_the_closure_the_step_raises(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "closure", "multiopt", FILES)
    train = folder / "train.py"
    text = train.read_text()
    for key in ("enc", "dec"):
        text = text.replace(
            f'optimizer.step("{key}")', f'xm.optimizer_step(optimizer, optimizer_args={{"closure": "{key}"}})'
        )
    train.write_text(text)
    result = run_script(folder, "train.py", runner=False, check=False)
    assert result.returncode != 0
    assert "got an unexpected keyword argument 'closure'" in result.stderr
    assert "trained" not in result.output
