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


UTILS = """\
import torch


def sparse_mx_to_torch_sparse_tensor(indices, values, n):
    return torch.sparse.FloatTensor(indices, values, torch.Size([n, n]))


def load_data(indices, values, n):
    A = sparse_mx_to_torch_sparse_tensor(indices, values, n)
    features = torch.ones(n, 4)
    return A, features


def load_adj(indices, values, n):
    adj = load_data(indices, values, n)[1].to_sparse()
    return adj
"""

TRAIN = """\
import torch

from pygcn.utils import load_adj, load_data

A, features = load_data(indices, values, n)
B = load_adj(indices, values, n)
if args.cuda:
    features = features.cuda()
    A = A.cuda()
    B = B.cuda()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_sparse_tensor_a_helper_of_another_module_binds_then_returns(tmp_path: Path, target: str) -> None:
    """GRAND's shape: pygcn/utils.py's ``load_data`` binds the adjacency to a name (what another
    function of the module returns) and returns it in a tuple; ``load_adj`` binds one made with
    ``.to_sparse()`` and returns the name. The script's moves of both are XLA510 errors in a run
    over the project (the features, dense, are no finding)."""
    files = {"pygcn/__init__.py": "", "pygcn/utils.py": UTILS, "train.py": TRAIN}
    repo = write_project(tmp_path, "grand", files)
    found = unfixed_findings(repo, ["pygcn/utils.py", "train.py"], target)
    assert [(line, message.split(", which")[0]) for rule, line, message in found["train.py"] if rule == "XLA510"] == [
        (9, "`A` holds a sparse tensor"),
        (10, "`B` holds a sparse tensor"),
    ]
