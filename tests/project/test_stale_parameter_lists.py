"""Parameter lists a module class of another project module collects in ``__init__`` (GCNII's
model.py: ``self.params1 = list(self.convs.parameters())``), read by the script's optimizer
after it moved the model (XLA203 at the optimizer, naming the class's module and the
assignment); the near variant whose attributes hold the submodules gets no finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

MODEL = """import torch.nn as nn


class GCNII(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
        self.fcs = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 3)])
        self.params1 = list(self.convs.parameters())
        self.params2 = list(self.fcs.parameters())

    def forward(self, x):
        for layer in [*self.convs, *self.fcs]:
            x = layer(x)
        return x
"""
TRAIN = """import torch
import torch.optim as optim

from model import GCNII

device = torch.device("cuda:0")
model = GCNII().to(device)
optimizer = optim.Adam(
    [{"params": model.params1, "weight_decay": 0.01}, {"params": model.params2, "weight_decay": 0.0}], lr=0.01
)
x = torch.randn(4, 8).to(device)
for epoch in range(3):
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
"""
SUBMODULES = (
    ("self.params1 = list(self.convs.parameters())", "self.part = self.convs"),
    ("self.params2 = list(self.fcs.parameters())", "self.head = self.fcs"),
)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_lists_collected_in_another_modules_init_are_stale_after_the_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)  # the finding names the class's module by its path from here
    write_project(tmp_path, "gcnii", {"model.py": MODEL, "train.py": TRAIN})
    found = unfixed_findings(tmp_path, ["model.py", "train.py"], target)
    stale = [(line, message) for rule, line, message in found["train.py"] if rule == "XLA203"]
    assert [line for line, _ in stale] == [8]  # the optimizer, as `check` reads the original
    assert stale[0][1].startswith(
        "the optimizer is built over `model.params1` and `model.params2`, which `GCNII.__init__` (model.py) "
        "collected (`self.params1 = list(self.convs.parameters())`; `self.params2 = list(self.fcs.parameters())`) "
        "before `model` moved to the XLA device"
    )
    assert not [f for f in found["model.py"] if f[0] == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_attributes_holding_submodules_read_after_the_move(tmp_path: Path, target: str) -> None:
    model = MODEL
    for old, new in SUBMODULES:
        model = model.replace(old, new)
    train = TRAIN.replace("model.params1", "model.part.parameters()").replace(
        "model.params2", "model.head.parameters()"
    )
    write_project(tmp_path, "gcnii", {"model.py": model, "train.py": train})
    found = unfixed_findings(tmp_path, ["model.py", "train.py"], target)
    assert set(found) == {"model.py", "train.py"}
    assert not [f for name in found for f in found[name] if f[0] in ("XLA203", "XLA213")]
