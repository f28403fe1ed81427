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

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import Executed, Run, barrier_per_step_problems, converted_project, run_script
from tests.support.projects import write_project
from tests.support.training_programs import MINIGPT_DATA, MINIGPT_RUNNER

pytestmark = pytest.mark.executed

STEPS = 10

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


def _trains_like_the_original(folder: Path, eager: Run) -> None:
    """On XLA, like the original (``barrier_per_step_problems``: one graph run per step, none
    new after the warm-up), with the optimizer stepping XLA parameters only."""
    run = run_script(folder, "main.py")
    assert len(run.losses) == STEPS
    problems = barrier_per_step_problems(run, eager, Executed("main.py"), STEPS)
    assert not problems, problems
    assert run.stepped_devices == ("xla",)


def test_checks_around_a_helper_of_another_module_that_moves_are_dropped_and_it_trains_on_xla(
    tmp_path: Path,
) -> None:
    files = {"util.py": UTIL, "main.py": PALETTE_MAIN}
    eager = run_script(write_project(tmp_path / "eager", "guarded", files), "main.py", on_xla=False)
    assert len(eager.losses) == STEPS
    ported = converted_project(tmp_path / "ported", "guarded", files)
    assert "is_available" not in (ported / "main.py").read_text()
    _trains_like_the_original(ported, eager)


def test_without_xla104_the_checks_stay_and_the_optimizer_steps_cpu_parameters(tmp_path: Path) -> None:
    files = {"util.py": UTIL, "main.py": PALETTE_MAIN}
    kept = converted_project(tmp_path / "kept", "guarded", files, RuleSelection(ignore=("XLA104",)))
    assert (kept / "main.py").read_text().count("torch.cuda.is_available()") == 2
    assert run_script(kept, "main.py").stepped_devices == ("cpu",)


def test_a_device_check_handed_as_a_flag_leaves_the_batches_on_the_cpu_as_xla119_says(tmp_path: Path) -> None:
    """Converted as it is, the model is on the XLA device and the batches stay on the CPU (the
    forward fails); resolved as the finding says, it trains like the original."""
    files = {"data.py": MINIGPT_DATA, "runner.py": MINIGPT_RUNNER, "main.py": MINIGPT_MAIN}
    eager = run_script(write_project(tmp_path / "eager", "guarded", files), "main.py", on_xla=False)
    assert len(eager.losses) == STEPS
    ported = converted_project(tmp_path / "ported", "guarded", files)
    runner = (ported / "runner.py").read_text()
    assert 'return self.device.type == "cuda"' in runner
    result = run_script(ported, "main.py", check=False)
    assert result.returncode != 0 and "step 0 loss" not in result.output
    assert "Expected XLA tensor" in result.stderr, result.stderr[-2000:]
    (ported / "runner.py").write_text(
        runner.replace('self.device.type == "cuda"', 'self.device.type in ("cuda", "xla")')
    )
    _trains_like_the_original(ported, eager)
