"""Executed: a model that a helper of another module moves and returns wrapped in nn.DataParallel,
handed with a DataLoader to a training function of a third module that moves only the targets
(on CUDA the wrapper's scatter moved the inputs).  The port keeps the wrapper (it leaves its file:
XLA605), which on XLA calls the model directly, and wraps the loader in a device loader where it
is handed (XLA302): on torch_xla 2.9 (CPU) the project trains like the original in eager mode
(same losses), on the XLA device, with no new graph after the warm-up.

Negative control: the converted project with the loader handed as it was (no device loader) fails
at the first forward: the inputs reach the model on the XLA device from the CPU."""

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
    convert_folder,
    loss_problems,
    optimizer_problems,
    parse_run,
    run_command,
    run_environment,
    steady_problems,
    xla_problems,
)
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS_PER_EPOCH = 8
EPOCHS = 2

NETS = """\
import torch.nn as nn


def make_parallel(model, device):
    model.to(device)
    return nn.DataParallel(model)
"""

LOOPS = """\
def train_epoch(loader, model, criterion, optimizer, device, step):
    model.train()
    for inputs, targets in loader:
        targets = targets.to(device)
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
        step += 1
    return step
"""

TRAIN = f"""\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from loops import train_epoch
from nets import make_parallel


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn({STEPS_PER_EPOCH * 8}, 4), torch.randint(0, 3, ({STEPS_PER_EPOCH * 8},)))
    loader = DataLoader(data, batch_size=8)
    model = make_parallel(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    step = 0
    for epoch in range({EPOCHS}):
        step = train_epoch(loader, model, nn.CrossEntropyLoss(), optimizer, device, step)


if __name__ == "__main__":
    main()
"""

FILES = {"nets.py": NETS, "loops.py": LOOPS, "train.py": TRAIN}
HANDED = "train_epoch(pl.MpDeviceLoader(loader, torch_xla.device()), model,"
CASE = Executed("train.py", steps_per_epoch=STEPS_PER_EPOCH)


def _eager(tmp_path: Path) -> Run:
    folder = write_project(tmp_path / "eager", "wrapped", FILES)
    return parse_run(run_command([sys.executable, "train.py"], folder, run_environment()), folder)


def _converted(tmp_path: Path) -> Path:
    folder = write_project(tmp_path / "ported", "wrapped", FILES)
    convert_folder(folder)
    return folder


def test_the_loader_handed_with_a_wrapped_model_trains_on_the_device(tmp_path: Path) -> None:
    eager = _eager(tmp_path)
    folder = _converted(tmp_path)
    assert HANDED in (folder / "train.py").read_text()
    assert "return nn.DataParallel(model)" in (folder / "nets.py").read_text()
    command = [sys.executable, str(XLA_RUNNER), "train.py"]
    run = parse_run(run_command(command, folder, run_environment(PJRT_DEVICE="CPU")), folder)
    assert len(eager.losses) == STEPS_PER_EPOCH * EPOCHS
    problems = loss_problems(run, eager) + xla_problems(run) + optimizer_problems(run) + steady_problems(run, CASE)
    assert not problems, problems


def test_without_the_device_loader_the_inputs_reach_the_model_from_the_cpu(tmp_path: Path) -> None:
    folder = _converted(tmp_path)
    train = folder / "train.py"
    train.write_text(train.read_text().replace(HANDED, "train_epoch(loader, model,"))
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), "train.py"],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0
    assert "step 0 loss" not in result.stdout
    assert "Expected XLA tensor. Got: torch.FloatTensor" in result.stderr, result.stderr[-2000:]
