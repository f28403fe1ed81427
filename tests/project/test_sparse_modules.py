"""A module class of one project file holds a sparse Parameter (KGAT's shape: a sparse placeholder,
its data set from the loader) and multiplies it with ``torch.matmul`` in its forward; the script
of another file builds it and moves it whole (held-out list 23, KGAT-pytorch): XLA510 at the move
in the script and at the product in the class's file, both targets. The same script over a class
that densifies the adjacency first has no XLA510."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

MODEL = """\
import torch
from torch import nn


class GraphModel(nn.Module):
    def __init__(self, n, adjacency):
        super().__init__()
        self.emb = nn.Embedding(n, 8)
        self.A = nn.Parameter(torch.sparse.FloatTensor(n, n))
        self.A.data = adjacency
        self.A.requires_grad = False

    def forward(self, idx):
        return torch.matmul(self.A, self.emb.weight)[idx].sum()
"""

MAIN = """\
import torch

from model import GraphModel

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = GraphModel(n, adjacency)
model.to(device)
opt = torch.optim.Adam(model.parameters())
for idx in batches:
    idx = idx.to(device)
    loss = model(idx)
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_module_of_another_file_moved_with_its_sparse_parameter(tmp_path: Path, target: str) -> None:
    repo = write_project(tmp_path / "sparse", "kgat", {"model.py": MODEL, "main.py": MAIN})
    found = unfixed_findings(repo, ["model.py", "main.py"], target)
    assert [line for rule, line, _ in found["model.py"] if rule == "XLA510"] == [14]
    moves = [message for rule, _, message in found["main.py"] if rule == "XLA510"]
    assert len(moves) == 1
    assert moves[0].startswith("`model` (a `GraphModel`) holds a sparse tensor in `self.A`, a Parameter or buffer")
    dense = MODEL.replace("torch.sparse.FloatTensor(n, n))", "torch.zeros(n, n))").replace(
        "self.A.data = adjacency", "self.A.data = adjacency.to_dense()"
    )
    repo = write_project(tmp_path / "dense", "kgat", {"model.py": dense, "main.py": MAIN})
    found = unfixed_findings(repo, ["model.py", "main.py"], target)
    assert not [line for findings in found.values() for rule, line, _ in findings if rule == "XLA510"]
