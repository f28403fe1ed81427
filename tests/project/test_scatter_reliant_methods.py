"""Known gap (obligation 3, DPR's ``validate_average_rank``): a method feeds a model that a helper of
another module returned wrapped in DataParallel or in DDP with device_ids (kept on ``self`` by
``__init__``) tensors that a method of an instance the tool cannot type made on the host
(``unwrap(self.model).make_input(samples)``), with no move: on CUDA the wrapper moved them, on XLA
nothing does and the forward fails. The training path moves its inputs through a helper handed the
device. Expected: XLA116 at the forward. The tool says nothing yet: proving the inputs are host
tensors needs a fact no summary holds (a method that makes its tensors on the host, looked up by
its name on an untyped receiver). Strict xfail: it fails loudly once it is closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

UTILS = """import torch


def setup(model, optimizer, device, n_gpu=1, local_rank=-1):
    model.to(device)
    if n_gpu > 1:
        model = torch.nn.DataParallel(model)
    if local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    return model, optimizer


def unwrap(model):
    return model.module if hasattr(model, "module") else model


def to_device(batch, device):
    return [t.to(device) for t in batch]
"""

NET = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, ids, mask):
        return self.fc(ids * mask)

    def make_input(self, samples):
        ids = torch.stack([torch.tensor(s, dtype=torch.float32) for s in samples])
        return ids, torch.ones_like(ids)
"""

TRAIN = """import torch

from pkg.net import Net
from pkg.utils import setup, to_device, unwrap


class Trainer:
    def __init__(self, cfg):
        model = Net()
        optimizer = None
        model, optimizer = setup(model, optimizer, cfg["device"], cfg["n_gpu"], cfg["local_rank"])
        self.model = model
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.cfg = cfg

    def train(self, data):
        for samples in data:
            ids, mask = to_device(unwrap(self.model).make_input(samples), self.cfg["device"])
            self.optimizer.zero_grad()
            self.model(ids, mask).sum().backward()
            self.optimizer.step()

    def validate(self, data):
        net = unwrap(self.model)
        for samples in data:
            ids, mask = net.make_input(samples)
            with torch.no_grad():
                out = self.model(ids, mask)
"""


@pytest.mark.xfail(strict=True, reason="known gap: host tensors from a method of an untyped receiver")
def test_a_method_feeding_a_scatter_wrapped_model_unmoved_host_tensors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/net.py": NET, "train.py": TRAIN}
    write_project(tmp_path, "scatter", files)
    found = unfixed_findings(tmp_path, list(files), "2.9")
    errors = [message for rule, _, message in found.get("train.py", []) if rule == "XLA116"]
    assert any(message.startswith("`ids` reaches `self.model` on the CPU") for message in errors), errors
