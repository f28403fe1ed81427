"""A loss of another module that picks its device by its input's own CUDA check
(``torch.device("cuda") if feats.is_cuda else torch.device("cpu")``, SupContrast's SupConLoss) says
nothing of it in a single-file run: unconverted, an XLA tensor picks the CPU there, and the label
mask made on it meets the features on the XLA device, which torch_xla uploads it to (the loss, its
backward and the step stay on the device). The same choice by a flag, or an unguarded CUDA device,
is held (negative controls)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

LOSSES = """import torch
import torch.nn as nn


class PairLoss(nn.Module):
    def forward(self, feats, labels):
        device = {choice}
        mask = torch.eq(labels.view(-1, 1), labels.view(1, -1)).float().to(device)
        logits = feats @ feats.T
        return -(torch.log_softmax(logits, 1) * mask).sum(1).mean()
"""

TENSOR_CHOICE = 'torch.device("cuda") if feats.is_cuda else torch.device("cpu")'

MAIN = """import torch

from losses import PairLoss


def main(loader):
    model = torch.nn.Linear(4, 4).cuda()
    criterion = PairLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _held(tmp_path: Path, choice: str, target: str) -> list[tuple[str, int, str]]:
    folder = write_project(tmp_path, "pairs", {"losses.py": LOSSES.format(choice=choice), "main.py": MAIN})
    found = unfixed_findings(folder, ["main.py"], target)["main.py"]
    return [f for f in found if f[0] == "XLA003" and "losses.py" in f[2]]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_device_a_tensors_own_cuda_check_picks_is_held_by_nothing(tmp_path: Path, target: str) -> None:
    assert _held(tmp_path, TENSOR_CHOICE, target) == []


@pytest.mark.parametrize(
    "choice",
    ['torch.device("cuda")', TENSOR_CHOICE.replace("feats.is_cuda", "self.use_gpu")],
    ids=["unguarded", "by-a-flag"],
)
def test_a_cuda_device_that_no_tensor_check_guards_is_held(tmp_path: Path, choice: str) -> None:
    held = _held(tmp_path, choice, "2.9")
    assert len(held) == 1 and "CUDA device choice" in held[0][2] and "PairLoss" in held[0][2], held
