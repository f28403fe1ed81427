"""What a single-file run says of CUDA mixed precision in a module it does not convert (XLA003,
held-out list 16, DAB-DETR's main.py): the finding at a call names what the callee holds, its
gradient scaler, its autocast or both (``evaluate`` enters autocast and builds no scaler), and a
method of what a project function returns (``train_stats = train_one_epoch(...)``, a dict, then
``train_stats.items()``) is not that function: it sets up nothing.  A method of a project class
that holds mixed precision still does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

ENGINE = """\
import torch


def train_one_epoch(model, loader, optimizer, device):
    scaler = torch.cuda.amp.GradScaler()
    for x, y in loader:
        x = x.to(device)
        with torch.cuda.amp.autocast():
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return {"loss": loss.item()}


def evaluate(model, loader, device):
    for x, y in loader:
        with torch.cuda.amp.autocast():
            out = model(x.to(device))
    return {"acc": 1.0}


def make_scaler():
    return torch.cuda.amp.GradScaler()


class Scaled:
    def __init__(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def state(self):
        return self.scaler.state_dict()
"""

TRAIN = """\
import torch

from engine import Scaled, evaluate, make_scaler, train_one_epoch

device = torch.device("cuda")
model = torch.nn.Linear(3, 3).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(data, batch_size=2)
scaler = make_scaler()
scaled = Scaled()
print(scaled.state())
for epoch in range(2):
    train_stats = train_one_epoch(model, loader, opt, device)
    test_stats = evaluate(model, loader, device)
    log = {**{f"train_{k}": v for k, v in train_stats.items()}, **{f"test_{k}": v for k, v in test_stats.items()}}
"""

# The module imported whole: ``eng.evaluate``, and the dicts its functions return.
ALIASED = (
    TRAIN.replace("from engine import Scaled, evaluate, make_scaler, train_one_epoch", "import engine as eng")
    .replace("make_scaler()", "eng.make_scaler()")
    .replace("Scaled()", "eng.Scaled()")
    .replace("train_one_epoch(", "eng.train_one_epoch(")
    .replace("evaluate(", "eng.evaluate(")
)

AMP = "sets up CUDA mixed precision in engine.py, which still needs converting: convert it too"


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train", [TRAIN, ALIASED], ids=["by-name", "aliased"])
def test_amp_findings_name_what_the_callee_holds(tmp_path: Path, target: str, train: str) -> None:
    write_project(tmp_path, "proj", {"engine.py": ENGINE, "train.py": train})
    found = unfixed_findings(tmp_path, ["train.py"], target)["train.py"]
    amp = {line: message for rule, line, message in found if rule == "XLA003" and AMP in message}
    prefix = "eng." if train is ALIASED else ""
    assert sorted(amp) == [9, 10, 11, 14], found  # (not 15: ``train_stats.items``, ``test_stats.items``)
    assert amp[9] == f"`{prefix}make_scaler` {AMP} (its gradient scaler must become the XLA one)"
    assert amp[10] == f"`{prefix}Scaled` {AMP} (its gradient scaler must become the XLA one)"
    assert amp[11] == f"`scaled.state` {AMP} (its gradient scaler must become the XLA one)"  # (a method of it)
    assert amp[14] == f"`{prefix}evaluate` {AMP} (its autocast must become the XLA one)"
    # (``train_one_epoch`` is handed the optimizer: that finding names its training loop)
    assert any(line == 13 and "the optimizer goes to" in message for rule, line, message in found), found


@pytest.mark.parametrize("target", TARGETS)
def test_a_callee_with_a_scaler_and_autocast_names_both(tmp_path: Path, target: str) -> None:
    train = TRAIN.replace("train_one_epoch(model, loader, opt, device)", "train_one_epoch(model, loader, None, device)")
    write_project(tmp_path, "proj", {"engine.py": ENGINE, "train.py": train})
    found = unfixed_findings(tmp_path, ["train.py"], target)["train.py"]
    messages = [message for rule, line, message in found if rule == "XLA003" and line == 13]
    assert messages == [f"`train_one_epoch` {AMP} (its gradient scaler and autocast must become the XLA ones)"], found


# Held-out list 19 (XMem's train.py): the trainer class builds its scaler in ``__init__`` and enters
# autocast in its step; its methods that only load, save or set flags set up no mixed precision.
TRAINER = """\
import torch


class Trainer:
    def __init__(self, net):
        self.net = net
        self.scaler = torch.cuda.amp.GradScaler()

    def _forward(self, x):
        with torch.cuda.amp.autocast():
            return self.net(x).sum()

    def evaluate(self, x):
        return self._forward(x)

    def scaler_state(self):
        return self.scaler.state_dict()

    def train(self):
        self.training = True
        return self

    def save_network(self, path):
        with open(path, "w") as f:
            f.write("net")
"""

DRIVER = """\
import torch

from trainer import Trainer

trainer = Trainer(torch.nn.Linear(3, 3))
trainer.train()
print(trainer.evaluate(torch.zeros(2, 3)))
print(trainer.scaler_state())
trainer.save_network("net.txt")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_only_the_methods_that_hold_mixed_precision_set_it_up(tmp_path: Path, target: str) -> None:
    write_project(tmp_path, "proj", {"trainer.py": TRAINER, "train.py": DRIVER})
    found = unfixed_findings(tmp_path, ["train.py"], target)["train.py"]
    amp = {line: message for rule, line, message in found if rule == "XLA003" and "mixed precision" in message}
    where = "sets up CUDA mixed precision in trainer.py, which still needs converting: convert it too"
    assert sorted(amp) == [5, 7, 8], found  # not 6 (``train``) nor 9 (``save_network``)
    assert amp[5] == f"`Trainer` {where} (its gradient scaler and autocast must become the XLA ones)"
    assert amp[7].startswith(f"`trainer.evaluate` {where}")  # through ``self._forward``
    assert amp[8].startswith(f"`trainer.scaler_state` {where}")  # the scaler another method built
