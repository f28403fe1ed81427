"""Executed: a script whose device flag is added with a short option first
(``add_argument("-d", "--device", default="cuda:0")``) hands it to a trainer class of another module,
built and run in one expression (``Trainer(device=args.device).fit(data)``), on torch_xla 2.9 (CPU).

Converted as a project, the flag's default is the XLA device, so the run with the default trains
there like the eager original (run with ``-d cpu``): same losses, the optimizer stepping XLA
parameters, no new graph after the warm-up.  The negative control is the port with the flag's
default left as it was ("cuda:0", what the tool left before): the trainer moves the model to CUDA,
which an XLA host does not have, and the run fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

TRAINER = """\
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, device=torch.device("cuda:0")):
        self.device = device

    def fit(self, data):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(self.device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for step, (x, y) in enumerate(data):
            x, y = x.to(self.device), y.to(self.device)
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"step {step} loss {loss.item()}")
"""
RUN = """\
import argparse

import torch

from trainer import Trainer

p = argparse.ArgumentParser()
p.add_argument("-d", "--device", type=str, default="cuda:0")
args = p.parse_args()
g = torch.Generator().manual_seed(1)
data = [(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)) for _ in range(12)]
Trainer(device=args.device).fit(data)
"""
FILES = {"trainer.py": TRAINER, "run.py": RUN}
CASE = Executed("run.py")
PORTED_DEFAULT = 'p.add_argument("-d", "--device", type=str, default="xla")'


def test_the_ported_flag_default_trains_on_xla_like_the_original(tmp_path: Path) -> None:
    want = run_script(write_project(tmp_path / "eager", "flags", FILES), "run.py", "-d", "cpu", on_xla=False)
    assert len(want.losses) == 12
    folder = converted_project(tmp_path / "ported", "flags", FILES)
    assert PORTED_DEFAULT in (folder / "run.py").read_text()
    got = run_script(folder, "run.py")
    problems = training_problems(got, want, CASE)
    assert not problems, problems


def test_the_flag_default_left_on_cuda_fails_on_an_xla_host(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "unported", "flags", FILES)
    run = folder / "run.py"
    run.write_text(run.read_text().replace(PORTED_DEFAULT, PORTED_DEFAULT.replace('"xla"', '"cuda:0"')))
    got = run_script(folder, "run.py", check=False)
    assert got.returncode != 0
    assert got.losses == []
    assert "cuda" in got.stderr.lower()
