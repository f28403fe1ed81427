"""A method of the project's model class that returns ``.item()`` (``def get_step(self): return
self.step.data.item()``) gives the training loop a Python number: ``step = model.get_step()``,
then ``if step % 1000 == 0`` and ``k = step // 1000`` in an f-string read no device value (no
XLA702, XLA703 nor step closure), in the module that defines the class and in another module
that imports it (its summary's ``host_returns``), whether the instance is moved where it is built
or later.  A method that returns the tensor itself is still a device value: XLA703."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODELS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.step = nn.Parameter(torch.zeros(1).long(), requires_grad=False)

    def forward(self, x):
        self.step += 1
        return self.lin(x)

    def get_step(self):
        return self.step.data.item()

    def step_tensor(self):
        return self.step.data
"""
TRAIN = """\
import torch
from models import Net


def train(loader):
    device = torch.device("cuda")
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step = model.GETTER()
        k = step // 1000
        if step % 1000 == 0:
            torch.save(model.state_dict(), f"ck_{k}.pt")
"""
LATER = TRAIN.replace("model = Net().to(device)", "model = Net()\n    model.to(device)")


def _lazy(found: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _ in found if rule in ("XLA701", "XLA702", "XLA703")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train", [TRAIN, LATER], ids=["moved-where-built", "moved-later"])
def test_a_method_returning_an_item_gives_a_number(tmp_path: Path, target: str, train: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"models.py": MODELS, "train.py": train.replace("GETTER", "get_step")})
    found = unfixed_findings(folder, ["train.py", "models.py"], target)
    assert _lazy(found["train.py"]) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_returning_the_tensor_is_tested(tmp_path: Path, target: str) -> None:
    folder = write_project(
        tmp_path / "p", "p", {"models.py": MODELS, "train.py": TRAIN.replace("GETTER", "step_tensor")}
    )
    found = unfixed_findings(folder, ["train.py", "models.py"], target)
    assert ("XLA703", 17) in _lazy(found["train.py"])


@pytest.mark.parametrize("target", TARGETS)
def test_in_the_module_that_defines_it(tmp_path: Path, target: str) -> None:
    one = MODELS + "\n\n" + TRAIN.replace("import torch\nfrom models import Net\n", "").replace("GETTER", "get_step")
    folder = write_project(tmp_path / "p", "p", {"train.py": one})
    assert _lazy(unfixed_findings(folder, ["train.py"], target)["train.py"]) == []
