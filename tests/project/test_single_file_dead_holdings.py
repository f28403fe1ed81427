"""What a single-file run says of the project modules it does not convert (XLA003) leaves out code that
never runs on an XLA host or that holds no CUDA storage: a body under a CUDA flag the conversion of that
module keeps (``cuda = False if cpu_request else torch.cuda.is_available()``, ``if cuda:``), and a PyTorch
Geometric Dataset's reload of the processed cache it saves itself (``self.data, self.slices =
torch.load(self.processed_paths[0])`` in ``__init__``, saved again by ``process()``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import script_findings

TARGETS = ["2.9", "sagemaker"]

UTILS = """\
import torch


def describe(cpu_request=False):
    cuda = False if cpu_request else torch.cuda.is_available()
    if cuda:
        return f"{torch.cuda.device_count()} GPUs"
    return "CPU"
"""

DATASET = """\
import numpy as np
import torch
from torch_geometric.data import Data, InMemoryDataset


def read_graphs(folder):
    return Data(x=torch.from_numpy(np.load(folder + "/x.npy"))), {"x": torch.arange(0, 3)}


class Graphs(InMemoryDataset):
    def __init__(self, root):
        super().__init__(root)
        self.data, self.slices = torch.load(self.processed_paths[0])

    def process(self):
        self.data, self.slices = read_graphs(self.raw_dir)
        torch.save((self.data, self.slices), self.processed_paths[0])
"""

TRAIN = """\
import torch

from dataset import Graphs
from utils import describe

print(describe())
graphs = Graphs("data")
"""


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_code_under_a_kept_cuda_flag_and_a_datasets_own_cache_are_no_error(tmp_path: Path, target: str) -> None:
    assert (
        script_findings(tmp_path, {"utils.py": UTILS, "dataset.py": DATASET, "train.py": TRAIN}, target, "XLA003") == []
    )


@pytest.mark.parametrize("target", TARGETS)
def test_the_same_code_outside_the_flag_and_a_cache_saved_moved_stay_errors(tmp_path: Path, target: str) -> None:
    utils = UTILS.replace("    if cuda:\n        return", "    if cpu_request:\n        return")
    dataset = DATASET.replace("        torch.save(", "        self.data = self.data.cuda()\n        torch.save(")
    found = script_findings(tmp_path, {"utils.py": utils, "dataset.py": dataset, "train.py": TRAIN}, target, "XLA003")
    assert [line for line, _ in found] == [3, 4], found
    assert "`Graphs` has `torch.load(self.processed_paths[0])` (line 13)" in found[0][1]
    assert "`describe` has `torch.cuda.device_count`" in found[1][1]
