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

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.executed import (
    RUN_TIMEOUT,
    XLA_RUNNER,
    Executed,
    Run,
    barrier_per_step_problems,
    convert_folder,
    parse_run,
    run_command,
    run_environment,
    step_ends,
    unbarriered_problems,
)

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


def _project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'multiopt'\n")
    (folder / "optim_util.py").write_text(OPTIM_UTIL)
    (folder / "train.py").write_text(TRAIN)
    return folder


def _converted(folder: Path) -> Path:
    convert_folder(_project(folder))
    return folder


def _eager(tmp_path: Path) -> Run:
    folder = _project(tmp_path / "eager")
    return parse_run(run_command([sys.executable, "train.py"], folder, run_environment()), folder)


def _on_xla(folder: Path) -> Run:
    command = [sys.executable, str(XLA_RUNNER), "train.py"]
    return parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)


def test_keyed_steps_of_an_optimizer_wrapper_stay_and_both_networks_train_on_xla(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = _converted(tmp_path / "ported")
    ported = (folder / "train.py").read_text()
    assert 'optimizer.step("enc")' in ported and PORTED_STEP_END in ported
    run = _on_xla(folder)
    assert len(eager.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    assert "enc trained True on xla" in run.output
    assert "dec trained True on xla" in run.output


def test_without_the_barrier_each_step_compiles_a_bigger_graph(tmp_path: Path) -> None:
    """The graph count's negative control: the converted project without its barrier trains
    on XLA with the same losses, but each step's ``loss.item()`` runs a graph that holds every
    step before it: a new graph at every step, and the steady-state check sees it."""
    folder = _converted(tmp_path / "no-barrier")
    train = folder / "train.py"
    train.write_text(train.read_text().replace(PORTED_STEP_END, UNBARRIERED_STEP_END))
    run = _on_xla(folder)
    assert not unbarriered_problems(run, _eager(tmp_path), Executed("train.py"))


def test_with_the_key_passed_as_the_closure_the_step_raises(tmp_path: Path) -> None:
    folder = _converted(tmp_path / "closure")
    train = folder / "train.py"
    text = train.read_text()
    for key in ("enc", "dec"):
        text = text.replace(
            f'optimizer.step("{key}")', f'xm.optimizer_step(optimizer, optimizer_args={{"closure": "{key}"}})'
        )
    train.write_text(text)
    result = subprocess.run(
        [sys.executable, "train.py"],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0
    assert "got an unexpected keyword argument 'closure'" in result.stderr
    assert "trained" not in result.stdout
