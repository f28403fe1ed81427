"""Executed: the loop that drives an agent ``hydra.utils.instantiate`` builds (drq's shape: the class
is named only in the configuration; obligation 4), on torch_xla 2.9 (CPU).

``update`` is a name Python's dicts define too; it is matched to the project's stepping ``update``
because a call the tool cannot tell the class of (Hydra's instantiate) built the receiver.  Hydra is
not installed here: a stand-in package outside the project (its ``instantiate`` imports the class
named by ``_target_`` and calls it with the other keys, as Hydra does) is put on the path of every
run.  Converted as a folder, train.py's loop gets the step barrier and trains like the eager original
with no new graph after the warm-up; converted without that barrier (XLA301 off), each step compiles
a new, bigger graph: the negative control."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import (
    XLA_RUNNER,
    Executed,
    Run,
    convert_folder,
    loss_problems,
    parse_run,
    run_command,
    run_environment,
    steady_problems,
    xla_problems,
)

pytestmark = pytest.mark.executed

HYDRA_UTILS = """\
import importlib


def instantiate(config, **kwargs):
    params = {**config, **kwargs}
    module, _, name = params.pop("_target_").rpartition(".")
    return getattr(importlib.import_module(module), name)(**params)
"""

AGENT = """\
import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, device, lr):
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=lr)

    def update(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss
"""

TRAIN = """\
import hydra
import torch


class Workspace:
    def __init__(self, cfg):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.agent = hydra.utils.instantiate(cfg, device=self.device)

    def run(self):
        xs, ys = torch.randn(48, 4), torch.randn(48, 1)
        for step in range(18):
            i = step % 6
            loss = self.agent.update(xs[i * 8 : i * 8 + 8].to(self.device), ys[i * 8 : i * 8 + 8].to(self.device))
            print(f"step {step} loss {loss.item()}")


if __name__ == "__main__":
    torch.manual_seed(0)
    Workspace({"_target_": "agent.Agent", "lr": 0.05}).run()
"""

CASE = Executed("train.py", steps_per_epoch=6)


def _stand_in(folder: Path) -> Path:
    (folder / "hydra").mkdir(parents=True)
    (folder / "hydra" / "__init__.py").write_text("from hydra import utils\n")
    (folder / "hydra" / "utils.py").write_text(HYDRA_UTILS)
    return folder


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT)
    (folder / "train.py").write_text(TRAIN)
    return folder


def _run(folder: Path, stand_in: Path, on_xla: bool) -> Run:
    command = [sys.executable, *([str(XLA_RUNNER)] if on_xla else []), "train.py"]
    device = {"PJRT_DEVICE": "CPU"} if on_xla else {}
    return parse_run(run_command(command, folder, run_environment(PYTHONPATH=str(stand_in), **device)), folder)


def _runs(tmp_path: Path, selection: RuleSelection | None = None) -> tuple[Run, str, Run]:
    stand_in = _stand_in(tmp_path / "site")
    want = _run(_project(tmp_path / "eager"), stand_in, on_xla=False)
    ported = _project(tmp_path / "ported")
    convert_folder(ported, selection)
    return want, (ported / "train.py").read_text(), _run(ported, stand_in, on_xla=True)


def test_an_instantiated_agents_update_gets_its_barrier_in_the_loop_and_trains_like_the_original(
    tmp_path: Path,
) -> None:
    want, code, got = _runs(tmp_path)
    assert "            torch_xla.sync()\n" in code, code
    assert len(want.losses) == 18
    assert not loss_problems(got, want)
    assert not xla_problems(got)
    assert not steady_problems(got, CASE)
    before = code
    convert_folder(tmp_path / "ported")
    assert (tmp_path / "ported" / "train.py").read_text() == before  # a second run changes nothing


def test_without_that_barrier_each_update_compiles_a_new_graph(tmp_path: Path) -> None:
    want, code, got = _runs(tmp_path, RuleSelection(ignore=("XLA301",)))
    assert "torch_xla.sync()" not in code
    assert not loss_problems(got, want)
    assert steady_problems(got, CASE)
