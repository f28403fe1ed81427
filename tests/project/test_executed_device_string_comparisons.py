"""Executed: a model takes a device *string* (``def __init__(self, device="cuda")``) and turns it
into a device with a helper of another module that compares it with "cuda"
(LibRecommender's ``device_config``), on torch_xla 2.9 (CPU).

Converted as a project, the default becomes "xla" (XLA101) and the helper's comparison also accepts
it (XLA123: ``device in ("cuda", "xla")``), so the run trains on the XLA device like the eager
original (which, on a host without CUDA, took the CPU branch): same losses, the optimizer stepping
XLA parameters, no new graph after the warm-up.  The negative control is the port with the
comparison left as it was (what the tool left before): ``device_config("xla")`` returns the CPU,
and the model and its batches silently stay there: no XLA graph runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems, xla_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

CONFIGS = """\
import torch


def device_config(device):
    if device == "cuda" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
"""
MODEL = """\
import torch
import torch.nn.functional as F

from configs import device_config


class Model:
    def __init__(self, device="cuda"):
        self.device = device_config(device)
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(self.device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.05)

    def fit(self, data):
        for step, (x, y) in enumerate(data):
            x, y = x.to(self.device), y.to(self.device)
            loss = F.mse_loss(self.net(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print(f"step {step} loss {loss.item()}")
"""
RUN = """\
import torch

from model import Model

g = torch.Generator().manual_seed(1)
data = [(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)) for _ in range(12)]
Model().fit(data)
"""
FILES = {"configs.py": CONFIGS, "model.py": MODEL, "run.py": RUN}
CASE = Executed("run.py")
WIDENED = 'if device in ("cuda", "xla"):'


def test_the_widened_comparison_trains_on_xla_like_the_original(tmp_path: Path) -> None:
    want = run_script(write_project(tmp_path / "eager", "devstring", FILES), "run.py", on_xla=False)
    assert len(want.losses) == 12
    folder = converted_project(tmp_path / "ported", "devstring", FILES)
    assert WIDENED in (folder / "configs.py").read_text()
    assert 'def __init__(self, device="xla"):' in (folder / "model.py").read_text()
    got = run_script(folder, "run.py")
    problems = training_problems(got, want, CASE)
    assert not problems, problems


def test_the_comparison_left_as_it_was_stays_on_the_cpu(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "unported", "devstring", FILES)
    configs = folder / "configs.py"
    configs.write_text(configs.read_text().replace(WIDENED, 'if device == "cuda":'))
    got = run_script(folder, "run.py")
    assert len(got.losses) == 12
    assert xla_problems(got), "the model and its batches stayed on the CPU, yet graphs ran on XLA"
