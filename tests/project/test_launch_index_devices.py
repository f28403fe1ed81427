"""The process index a launcher hands its worker, handed on as a device to a trainer of another
module of the project (ZoeDepth's shape): ``mp.spawn(main_worker, ...)``, ``def
main_worker(gpu, ...)``, ``config.gpu = gpu``, ``Trainer(model, loader, device=config.gpu)``,
whose ``__init__`` does ``self.device = device`` and whose loop ``batch["x"].to(self.device)``.
Ported to ``torch_xla.launch`` the index is the XLA ordinal, an int, and ``.to(0)`` means
cuda:0: the move raises on an XLA host.  XLA116 at the handed index, in a project run and in a
single-file run of the script; nothing where the worker hands the XLA device, where the index
goes to a parameter that is no device, or where this file shows it is a CUDA index (XLA103
ports it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, loader, device=None, rank=0):
        self.model = model
        self.loader = loader
        self.rank = rank
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self):
        for batch in self.loader:
            x = batch["x"].to(self.device)
            loss = self.model(x).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""
TRAIN = """\
import torch
import torch.multiprocessing as mp

{imports}


def main_worker(gpu, config):
    config.gpu = gpu{extra}
    model = torch.nn.Linear(4, 2).cuda()
    loader = [{{"x": torch.randn(8, 4)}} for _ in range(3)]
    trainer = {call}
    trainer.train()


class Config:
    pass


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(Config(),))
"""
BUILDER = """\
from importlib import import_module


def get_trainer(name):
    return getattr(import_module(f"trainers.{name}"), "Trainer")
"""
FROM = "from trainers.trainer import Trainer"
ALIAS = "import trainers.trainer as tt"


def _findings(tmp_path: Path, names: list[str], target: str, **train: str) -> list[tuple[str, str, int, str]]:
    fields = {"imports": FROM, "extra": "", "call": "Trainer(model, loader, device=config.gpu)", **train}
    files = {
        "trainers/__init__.py": "",
        "trainers/trainer.py": TRAINER,
        "trainers/builder.py": BUILDER,
        "train.py": TRAIN.format(**fields),
    }
    write_project(tmp_path, "launched", files)
    found = unfixed_findings(tmp_path, names, target)
    assert [f for f in found.get("trainer.py", []) if f[0] in ("XLA103", "XLA111", "XLA116")] == []
    return [(name, *f) for name in ("train.py",) for f in found[name] if f[0] in ("XLA103", "XLA111", "XLA116")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["trainers/trainer.py", "train.py"], ["train.py"]], ids=["project", "single-file"])
@pytest.mark.parametrize(
    ("imports", "call"),
    [
        (FROM, "Trainer(model, loader, device=config.gpu)"),
        (FROM, "Trainer(model, loader, gpu)"),
        (ALIAS, "tt.Trainer(model, loader, device=config.gpu)"),
        ("from trainers.builder import get_trainer", 'get_trainer("trainer")(model, loader, device=config.gpu)'),
    ],
    ids=["attribute", "parameter-positional", "alias", "looked-up-class"],
)
def test_the_launch_index_handed_as_a_device_is_an_error_at_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str], imports: str, call: str
) -> None:
    monkeypatch.chdir(tmp_path)
    ((_, rule, line, message),) = _findings(tmp_path, names, target, imports=imports, call=call)
    assert (rule, line) == ("XLA116", 11)
    assert "the process index the launcher hands `main_worker` (an int)" in message
    if "get_trainer" in call:  # a class the tool cannot follow: said of the keyword
        assert 'handed as `device=` to `get_trainer("trainer")`: where that moves tensors to it' in message
    else:
        assert (
            '(trainers/trainer.py) moves tensors to the device it is handed (`batch["x"].to(self.device)`)' in message
        )
    assert ("torch_xla.device()" if target == "2.9" else "xm.xla_device()") in message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("extra", "call"),
    [
        ("", 'Trainer(model, loader, device="cuda")'),
        ("", "Trainer(model, loader, rank=gpu)"),
        ('\n    device = gpu\n    device = torch.device("cuda")', "Trainer(model, loader, device=device)"),
    ],
    ids=["a-cuda-device", "the-index-as-a-rank", "rebound-to-a-device"],
)
def test_a_device_or_an_index_that_is_no_device_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, extra: str, call: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, ["trainers/trainer.py", "train.py"], target, extra=extra, call=call) == []


@pytest.mark.parametrize("target", TARGETS)
def test_an_index_this_file_shows_is_a_cuda_index_is_ported_by_xla103_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(
        tmp_path, ["trainers/trainer.py", "train.py"], target, extra="\n    torch.cuda.set_device(config.gpu)"
    )
    assert found == []  # (XLA103 fixes it: not among the findings left to a person)
