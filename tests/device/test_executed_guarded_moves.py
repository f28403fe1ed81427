"""Executed: moves that a CUDA check guards, with the move in another module of the project.

* A ``torch.cuda.is_available()`` check around calls of a helper of another module that moves
  through a helper of its own (Palette's ``set_device`` -> ``set_gpu`` -> ``.cuda()``, in a module
  of their own): converted as one run, the checks are dropped (XLA104) and the project trains on
  the XLA device like the eager original (same losses, one graph per step, none new after the
  warm-up).  The negative control, converted with XLA104 off, keeps the checks (False on an XLA
  host): the optimizer steps CPU parameters.
* A device type check handed as a flag to a helper of another module that moves only if it is true
  (MiniGPT-4's ``prepare_sample(samples, cuda_enabled=self.cuda_enabled)``): converted, XLA119
  reports it, and it is right: the batches stay on the CPU while the model is on the XLA device,
  and the forward fails.  With the check resolved as the finding says (compare with 'xla' too),
  the project trains on the XLA device like the original."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import (
    RUN_TIMEOUT,
    XLA_RUNNER,
    convert_folder,
    loss_problems,
    optimizer_problems,
    parse_run,
    run_command,
    run_environment,
    xla_problems,
)

pytestmark = pytest.mark.executed

STEPS = 10
WARMUP = 3

UTIL = """\
import torch


def set_gpu(args):
    if args is None:
        return None
    return args.cuda()


def set_device(args):
    if isinstance(args, (list, tuple)):
        return [set_gpu(item) for item in args]
    return set_gpu(args)
"""

PALETTE_MAIN = """\
import torch
import torch.nn as nn

import util

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
if torch.cuda.is_available():
    net = util.set_device(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(STEPS)]
for step, (x, y) in enumerate(data):
    if torch.cuda.is_available():
        x, y = util.set_device([x, y])
    optimizer.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.6f}")
""".replace("STEPS", str(STEPS))

DATA = """\
import torch


def move_to_cuda(samples):
    def _move(tensor):
        return tensor.cuda()

    return {key: _move(value) for key, value in samples.items()}


def prepare_sample(samples, cuda_enabled=True):
    if cuda_enabled:
        samples = move_to_cuda(samples)
    return samples
"""

RUNNER = """\
import torch

from data import prepare_sample


class Runner:
    def __init__(self, model, device):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    @property
    def cuda_enabled(self):
        return self.device.type == "cuda"

    def train_epoch(self, loader):
        for step, samples in enumerate(loader):
            samples = prepare_sample(samples, cuda_enabled=self.cuda_enabled)
            self.optimizer.zero_grad()
            loss = ((self.model(samples["x"]) - samples["y"]) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            print(f"step {step} loss {loss.item():.6f}")
"""

MINIGPT_MAIN = """\
import torch
import torch.nn as nn

from runner import Runner

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
loader = [{"x": torch.randn(16, 4), "y": torch.randn(16, 1)} for _ in range(STEPS)]
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
Runner(model, device).train_epoch(loader)
""".replace("STEPS", str(STEPS))


def _project(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'guarded'\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _eager(folder: Path) -> list[float]:
    return parse_run(run_command([sys.executable, "main.py"], folder, run_environment()), folder).losses


def _on_xla(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(XLA_RUNNER), "main.py"],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def _trains_like_the_original(folder: Path, eager: list[float]) -> None:
    result = _on_xla(folder)
    assert result.returncode == 0, result.stderr[-3000:]
    run = parse_run(result.stdout, folder)
    want = parse_run("".join(f"step {i} loss {v}\n" for i, v in enumerate(eager)), folder)
    assert len(run.losses) == STEPS
    assert not loss_problems(run, want) + xla_problems(run) + optimizer_problems(run), run.output[-2000:]
    assert run.compiles[-1] == run.compiles[WARMUP - 1], run.compiles  # no new graph after the warm-up
    assert run.executions == STEPS, run.executions  # one graph per step: the step barrier
    assert run.stepped_devices == ("xla",)


def test_checks_around_a_helper_of_another_module_that_moves_are_dropped_and_it_trains_on_xla(
    tmp_path: Path,
) -> None:
    files = {"util.py": UTIL, "main.py": PALETTE_MAIN}
    eager = _eager(_project(tmp_path / "eager", files))
    assert len(eager) == STEPS
    ported = _project(tmp_path / "ported", files)
    convert_folder(ported)
    assert "is_available" not in (ported / "main.py").read_text()
    _trains_like_the_original(ported, eager)


def test_without_xla104_the_checks_stay_and_the_optimizer_steps_cpu_parameters(tmp_path: Path) -> None:
    kept = _project(tmp_path / "kept", {"util.py": UTIL, "main.py": PALETTE_MAIN})
    convert_folder(kept, RuleSelection(ignore=("XLA104",)))
    assert (kept / "main.py").read_text().count("torch.cuda.is_available()") == 2
    result = _on_xla(kept)
    assert result.returncode == 0, result.stderr[-3000:]
    assert parse_run(result.stdout, kept).stepped_devices == ("cpu",)


def test_a_device_check_handed_as_a_flag_leaves_the_batches_on_the_cpu_as_xla119_says(tmp_path: Path) -> None:
    """Converted as it is, the model is on the XLA device and the batches stay on the CPU (the
    forward fails); resolved as the finding says, it trains like the original."""
    files = {"data.py": DATA, "runner.py": RUNNER, "main.py": MINIGPT_MAIN}
    eager = _eager(_project(tmp_path / "eager", files))
    assert len(eager) == STEPS
    ported = _project(tmp_path / "ported", files)
    convert_folder(ported)
    runner = (ported / "runner.py").read_text()
    assert 'return self.device.type == "cuda"' in runner
    result = _on_xla(ported)
    assert result.returncode != 0 and "step 0 loss" not in result.stdout
    assert "Expected XLA tensor" in result.stderr, result.stderr[-2000:]
    (ported / "runner.py").write_text(
        runner.replace('self.device.type == "cuda"', 'self.device.type in ("cuda", "xla")')
    )
    _trains_like_the_original(ported, eager)
