"""What a module holds that no XLA host runs says nothing of it in a single-file run: a ``.cuda()``
after ``if not torch.cuda.is_available(): ...; return`` (a DataParallel class of the project that
returns early without CUDA devices) is no CUDA device choice for XLA003 to name at the import.
The same ``.cuda()`` without the early return is (a negative control), and so is one after an
early return that the test does not decide without CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

PARALLEL = """import torch


class _DataParallel(torch.nn.Module):
    def __init__(self, module, device_ids=None):
        super().__init__()
        {guard}
        self.module = module
        self.device_ids = device_ids
        if len(self.device_ids) == 1:
            self.module.cuda(device_ids[0])

    def forward(self, *inputs):
        return self.module(*inputs)
"""

EARLY_RETURN = """if not torch.cuda.is_available():
            self.module = module
            self.device_ids = []
            return"""

TRAIN = """import torch

from data_parallel import _DataParallel


def main(loader):
    device = torch.device("cuda")
    model = _DataParallel(torch.nn.Linear(4, 1), device_ids=[0]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = (model(x.to(device)) - y.to(device)).pow(2).mean()
        loss.backward()
        optimizer.step()
"""


def _held(tmp_path: Path, guard: str, target: str) -> list[tuple[str, int, str]]:
    folder = write_project(tmp_path, "parallel", {"data_parallel.py": PARALLEL.format(guard=guard), "train.py": TRAIN})
    found = unfixed_findings(folder, ["train.py"], target)["train.py"]
    return [f for f in found if f[0] == "XLA003" and "data_parallel.py" in f[2]]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cuda_move_after_an_early_return_without_cuda_is_held_by_nothing(tmp_path: Path, target: str) -> None:
    assert _held(tmp_path, EARLY_RETURN, target) == []


@pytest.mark.parametrize(
    "guard",
    ["pass", EARLY_RETURN.replace("if not torch.cuda.is_available():", "if device_ids is None:")],
    ids=["no-early-return", "undecided-test"],
)
def test_a_cuda_move_that_runs_without_cuda_is_held(tmp_path: Path, guard: str) -> None:
    held = _held(tmp_path, guard, "2.9")
    assert len(held) == 1 and "`self.module.cuda(device_ids[0])`" in held[0][2], held
