"""An optimizer built in the script over a module's parameters and handed to a LightningModule
of another module of the project that returns it from ``configure_optimizers`` (issue 32, O2;
asteroid's ``System(model, optimizer)``): Lightning moves the module after the optimizer exists,
and on XLA the move makes new Parameters, so the optimizer would step the CPU tensors.  XLA822
reports it at the optimizer's construction, through the module's summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SYSTEM = """\
import pytorch_lightning as pl


class System(pl.LightningModule):
    def __init__(self, model, optimizer, scheduler=None):
        super().__init__()
        self.model = model
        self.optimizer = optimizer

    def training_step(self, batch, batch_idx):
        return self.model(batch).sum()

    def configure_optimizers(self):
        return self.optimizer
"""

OWN = """\
import pytorch_lightning as pl
import torch


class System(pl.LightningModule):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model = model

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())
"""

TRAIN = """\
import pytorch_lightning as pl
import torch

from pkg.system import System


def main(loader):
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    system = System(model, optimizer)
    pl.Trainer(accelerator="tpu", strategy="xla").fit(system, loader)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["train.py"], ["train.py", "pkg/system.py", "pkg/__init__.py"]])
def test_the_prebuilt_optimizer_is_reported_at_its_construction(tmp_path: Path, target: str, names: list[str]) -> None:
    folder = write_project(tmp_path / "p", "p", {"pkg/__init__.py": "", "pkg/system.py": SYSTEM, "train.py": TRAIN})
    found = unfixed_findings(folder, names, target)["train.py"]
    assert [(rule, line) for rule, line, message in found if "configure_optimizers" in message] == [("XLA822", 9)]
    message = next(m for _, _, m in found if "configure_optimizers" in m)
    assert "`System.configure_optimizers` returns (`self.optimizer`)" in message
    assert "from `self.parameters()`" in message


@pytest.mark.parametrize("target", TARGETS)
def test_an_optimizer_the_module_builds_itself_is_not_reported(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"pkg/__init__.py": "", "pkg/system.py": OWN, "train.py": TRAIN})
    found = unfixed_findings(folder, ["train.py", "pkg/system.py"], target)
    assert not [f for fs in found.values() for f in fs if "configure_optimizers" in f[2]]
