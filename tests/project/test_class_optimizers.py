"""Optimizers a module class builds over its own parameters through code of other project
modules, then moved (XLA203): a model class whose ``__init__`` calls its base's ``compile()``
(an optimizer over ``self.parameters()`` from a helper of a third module) and then its base's
``model_to_device()`` (``self.to(self.device)``), the base in a package that re-exports it;
and an agent whose submodules build their optimizers with a project class handed their
parameters, moved by the caller after it is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

_PACKAGE = {
    "lib/__init__.py": "from lib.base import BaseModel\n",
    "lib/utils.py": """import torch


def get_device(gpu):
    if gpu >= 0 and torch.cuda.is_available():
        return torch.device(f"cuda:{gpu}")
    return torch.device("cpu")


def get_optimizer(name, params, lr):
    return getattr(torch.optim, name)(params, lr=lr)
""",
    "lib/base.py": """from torch import nn

from lib.utils import get_device, get_optimizer


class BaseModel(nn.Module):
    def __init__(self, gpu):
        super().__init__()
        self.device = get_device(gpu)

    def compile(self, optimizer, lr):
        self.optimizer = get_optimizer(optimizer, self.parameters(), lr)

    def model_to_device(self):
        self.to(device=self.device)

    def fit(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            loss = (self(x.to(self.device)) - y.to(self.device)).pow(2).mean()
            loss.backward()
            self.optimizer.step()
""",
    "zoo/__init__.py": "",
    "zoo/dcn.py": """from torch import nn

from lib import BaseModel


class DCN(BaseModel):
    def __init__(self, gpu=-1, lr=1e-3):
        super().__init__(gpu)
        self.fc = nn.Linear(4, 1)
        self.compile("Adam", lr)
        self.model_to_device()

    def forward(self, x):
        return self.fc(x)


class MovedFirst(BaseModel):
    def __init__(self, gpu=-1, lr=1e-3):
        super().__init__(gpu)
        self.fc = nn.Linear(4, 1)
        self.model_to_device()
        self.compile("Adam", lr)

    def forward(self, x):
        return self.fc(x)
""",
    "run.py": """import torch

from zoo.dcn import DCN

if __name__ == "__main__":
    model = DCN(gpu=0)
    model.fit([(torch.randn(8, 4), torch.randn(8, 1))])
""",
}


def _write(folder: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder)  # the findings name the other modules by their paths from here
    write_project(folder, "proj", {})
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_base_method_builds_and_another_moves_in_a_subclass_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    _write(tmp_path, _PACKAGE, monkeypatch)
    found = unfixed_findings(tmp_path, list(_PACKAGE), target)
    stranded = [(line, message) for rule, line, message in found["dcn.py"] if rule == "XLA203"]
    assert stranded == [(11, stranded[0][1])]  # DCN's ``self.model_to_device()``, not MovedFirst's
    assert stranded[0][1].startswith(
        "`self.model_to_device()` moves the `DCN` instance (`self.to(device=self.device)` in "
        "`BaseModel.model_to_device` (lib/base.py)) to a device that may be the XLA device after `DCN.__init__` "
        'built `self.optimizer` (by `self.compile("Adam", lr)` in `BaseModel.compile` (lib/base.py))'
    )
    assert not [f for name in ("base.py", "utils.py", "run.py") for f in found[name] if f[0] == "XLA203"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_converted_alone_the_subclass_keeps_the_base_modules_cuda_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """Converted alone, dcn.py leaves lib/'s CUDA device choice as it is: the instance stays on
    the CPU, where the optimizer keeps its parameters, so no XLA203."""
    _write(tmp_path, _PACKAGE, monkeypatch)
    found = unfixed_findings(tmp_path, ["zoo/dcn.py"], target)
    assert not [f for f in found["dcn.py"] if f[0] == "XLA203"]


_AGENT = {
    "tools.py": """import torch


class Optimizer:
    def __init__(self, name, parameters, lr):
        self._name = name
        self._opt = torch.optim.Adam(parameters, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
""",
    "models.py": """from torch import nn

import tools


class WorldModel(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self._model_opt = tools.Optimizer("model", self.parameters(), lr)

    def forward(self, x):
        return self.head(self.encoder(x))

    def _train(self, x, y):
        self._model_opt((self(x) - y).pow(2).mean())
""",
    "agent.py": """import torch
from torch import nn

import models
import tools


class Agent(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self._wm = models.WorldModel(lr)

    def train_step(self, x, y):
        self._wm._train(x, y)


def main(device, loader):
{build}
    for x, y in loader:
        agent.train_step(x.to(device), y.to(device))
""",
}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    ("build", "stranded"),
    [
        ("    agent = Agent(1e-3).to(device)", [18]),
        ("    agent = Agent(1e-3)\n    agent.cuda()", [19]),
        ("    agent = Agent(1e-3).to('cpu')", []),
        (
            "    agent = Agent(1e-3).to(device)\n"
            '    agent._wm._model_opt = tools.Optimizer("model", agent._wm.parameters(), 1e-3)',
            [],
        ),
    ],
)
def test_a_submodule_with_a_project_optimizer_class_moved_by_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str, stranded: list[int]
) -> None:
    files = {**_AGENT, "agent.py": _AGENT["agent.py"].format(build=build)}
    _write(tmp_path, files, monkeypatch)
    found = unfixed_findings(tmp_path, list(files), target)
    xla203 = [(line, message) for rule, line, message in found["agent.py"] if rule == "XLA203"]
    assert [line for line, _ in xla203] == stranded
    for _, message in xla203:
        assert "after `Agent.__init__` built `self._wm._model_opt` over the instance's own parameters" in message
    assert not [f for name in ("tools.py", "models.py") for f in found[name] if f[0] == "XLA203"]
