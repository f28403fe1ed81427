"""Executed: CUDA indices the port used to leave as devices, run converted on XLA (PJRT_DEVICE=CPU):
an int handed to a project function's ``device`` parameter, and an element of a list of GPU
numbers (``net.to(gpu_ids[0])``); each with a negative control that keeps the index and fails
("Found no NVIDIA driver": ``.to(0)`` is cuda:0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import convert_folder, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

UTILS = """\
import torch


def move(batch, device):
    return {k: v.to(device) for k, v in batch.items()}
"""
TRAIN = """\
import torch
from utils import move


def init_net(net, gpu_ids=[]):
    if len(gpu_ids) > 0:
        assert(torch.cuda.is_available())
        net.to(gpu_ids[0])
    return net


class Trainer:
    def __init__(self, model, rank: int = 0):
        self.rank = rank
        self.model = init_net(model, [rank])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train(self, batches):
        for step, b in enumerate(batches):
            b = move(b, self.rank)
            loss = self.model(b["x"]).pow(2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print(f"step {step} loss {loss.item()}")
        print("trained on", self.model.weight.device, b["x"].device)


torch.manual_seed(0)
Trainer(torch.nn.Linear(4, 2)).train([{"x": torch.randn(8, 4)} for _ in range(3)])
"""


def test_handed_and_listed_indices_become_the_xla_device(tmp_path: Path) -> None:
    write_project(tmp_path, "indices", {"utils.py": UTILS, "train.py": TRAIN})
    convert_folder(tmp_path)
    output = (tmp_path / "train.py").read_text()
    assert "move(b, torch_xla.device())" in output and "net.to(torch_xla.device())" in output
    assert "trained on xla:0 xla:0" in run_script(tmp_path, "train.py", runner=False).output
    for kept in ("move(b, self.rank)", "net.to(gpu_ids[0])"):
        ported = "move(b, torch_xla.device())" if kept.startswith("move") else "net.to(torch_xla.device())"
        (tmp_path / "train.py").write_text(output.replace(ported, kept))
        failed = run_script(tmp_path, "train.py", runner=False, check=False)
        assert failed.returncode != 0 and "Found no NVIDIA driver" in failed.stderr, failed.stderr[-3000:]
