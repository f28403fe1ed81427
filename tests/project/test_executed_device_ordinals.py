"""Executed: a data module builds every batch on ``torch.device(device_id) if device_id >= 0 else
torch.device("cpu")`` (an integer alone is cuda:N), and an agent of another module takes its device
from a config lookup whose default is CUDA (``config.get("device", "cuda:0")``), on torch_xla 2.9
(CPU).

Converted as a project, the ordinal is the XLA device and the lookup's default "xla", so the run
with the defaults trains there like the eager original (run with ``--gpu -1``, which takes the CPU
branch and sets the config's device to "cpu"): same losses, the optimizer stepping XLA parameters,
no new graph after the warm-up.  The negative control is the port with the ordinal left as it was
(what the tool left before): every batch is built on cuda:0, which an XLA host does not have, and
the run fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

DATA = """\
import torch


def batches(data, device_id):
    device = torch.device(device_id) if device_id >= 0 else torch.device("cpu")
    for x, y in data:
        yield torch.tensor(x, device=device), torch.tensor(y, device=device)
"""
AGENT = """\
import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, config):
        self.device = config.get("device", "cuda:0")
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        self.model.to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=config["lr"])

    def fit(self, batches):
        for step, (x, y) in enumerate(batches):
            loss = F.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print(f"step {step} loss {loss.item()}")
"""
RUN = """\
import argparse

import torch

from agent import Agent
from data import batches

p = argparse.ArgumentParser()
p.add_argument("--gpu", type=int, default=0)
args = p.parse_args()
config = {"lr": 0.05}
if args.gpu < 0:
    config["device"] = "cpu"
g = torch.Generator().manual_seed(1)
data = [(torch.randn(8, 4, generator=g).tolist(), torch.randn(8, 1, generator=g).tolist()) for _ in range(12)]
Agent(config).fit(batches(data, args.gpu))
"""
FILES = {"data.py": DATA, "agent.py": AGENT, "run.py": RUN}
CASE = Executed("run.py")
PORTED_ORDINAL = 'device = torch_xla.device() if device_id >= 0 else torch.device("cpu")'


def test_the_ported_ordinal_and_lookup_default_train_on_xla_like_the_original(tmp_path: Path) -> None:
    want = run_script(write_project(tmp_path / "eager", "ordinals", FILES), "run.py", "--gpu", "-1", on_xla=False)
    assert len(want.losses) == 12
    folder = converted_project(tmp_path / "ported", "ordinals", FILES)
    assert PORTED_ORDINAL in (folder / "data.py").read_text()
    assert 'config.get("device", "xla")' in (folder / "agent.py").read_text()
    got = run_script(folder, "run.py")
    problems = training_problems(got, want, CASE)
    assert not problems, problems


def test_the_ordinal_left_as_it_was_fails_on_an_xla_host(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "unported", "ordinals", FILES)
    data = folder / "data.py"
    data.write_text(data.read_text().replace("torch_xla.device() if", "torch.device(device_id) if"))
    got = run_script(folder, "run.py", check=False)
    assert got.returncode != 0
    assert got.losses == []
    assert "cuda" in got.stderr.lower() or "nvidia" in got.stderr.lower()
