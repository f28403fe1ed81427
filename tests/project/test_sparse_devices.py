"""A graph cell that makes its sparse support with a device another module of the project chooses
(``device = get_device()``, a function of ``config``), and multiplies it in a helper its forward calls: XLA510 at the
creation and at the product in a run over the project, both targets; a device that module pins
to the CPU makes no error at the creation (the product in the forward still is one: the model's
tensors are on the XLA device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

CONFIG = """\
import torch


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""

CELL = """\
import torch
from torch import nn

from config import get_device

device = get_device()


class Cell(nn.Module):
    def __init__(self, index, values, shape):
        super().__init__()
        self.support = torch.sparse_coo_tensor(index, values, shape, device=device)

    def _gconv(self, x):
        return torch.sparse.mm(self.support, x)

    def forward(self, x):
        return torch.tanh(self._gconv(x))
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_sparse_tensor_made_on_a_device_of_another_module(tmp_path: Path, target: str) -> None:
    repo = write_project(tmp_path / "xla", "graphs", {"config.py": CONFIG, "cell.py": CELL})
    found = unfixed_findings(repo, ["config.py", "cell.py"], target)
    assert [line for rule, line, _ in found["cell.py"] if rule == "XLA510"] == [12, 15]
    pinned = 'import torch\n\n\ndef get_device():\n    return torch.device("cpu")\n'
    repo = write_project(tmp_path / "cpu", "graphs", {"config.py": pinned, "cell.py": CELL})
    found = unfixed_findings(repo, ["config.py", "cell.py"], target)
    assert [line for rule, line, _ in found["cell.py"] if rule == "XLA510"] == [15]
