"""Executed: a project's optimizer wrapper stepped with a key (``MultiOptimizer.step(key)``,
``optimizer.step("enc")``), on torch_xla 2.9 (CPU).  The port keeps the keyed steps as written
(XLA201 reports them) and adds the loop's barrier: both networks train on XLA.  The negative
control: the steps as the port used to write them, the key passed on as the closure
(``xm.optimizer_step(optimizer, optimizer_args={"closure": "enc"})``), raise TypeError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.executed import RUN_TIMEOUT, convert_folder, run_environment

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

TRAIN = """\
import torch
import torch.nn as nn

from optim_util import build_optimizer


def main():
    device = "cuda"
    torch.manual_seed(0)
    model = {"enc": nn.Linear(4, 8).to(device), "dec": nn.Linear(8, 1).to(device)}
    before = {k: m.weight.detach().cpu().clone() for k, m in model.items()}
    optimizer = build_optimizer({k: m.parameters() for k, m in model.items()}, lr=0.1)
    for step in range(4):
        x, y = torch.randn(8, 4).to(device), torch.randn(8, 1).to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model["dec"](model["enc"](x)), y)
        loss.backward()
        optimizer.step("enc")
        optimizer.step("dec")
    for k, m in model.items():
        print(k, "trained", not torch.equal(before[k], m.weight.detach().cpu()), "on", m.weight.device.type)


if __name__ == "__main__":
    main()
"""


def _converted(folder: Path) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'multiopt'\n")
    (folder / "optim_util.py").write_text(OPTIM_UTIL)
    (folder / "train.py").write_text(TRAIN)
    convert_folder(folder)
    return folder


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "train.py"],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def test_keyed_steps_of_an_optimizer_wrapper_stay_and_both_networks_train_on_xla(tmp_path: Path) -> None:
    folder = _converted(tmp_path / "ported")
    assert 'optimizer.step("enc")' in (folder / "train.py").read_text()
    result = _run(folder)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "enc trained True on xla" in result.stdout
    assert "dec trained True on xla" in result.stdout


def test_with_the_key_passed_as_the_closure_the_step_raises(tmp_path: Path) -> None:
    folder = _converted(tmp_path / "closure")
    train = folder / "train.py"
    text = train.read_text()
    for key in ("enc", "dec"):
        text = text.replace(
            f'optimizer.step("{key}")', f'xm.optimizer_step(optimizer, optimizer_args={{"closure": "{key}"}})'
        )
    train.write_text("import torch_xla.core.xla_model as xm\n" + text)
    result = _run(folder)
    assert result.returncode != 0
    assert "got an unexpected keyword argument 'closure'" in result.stderr
    assert "trained" not in result.stdout
