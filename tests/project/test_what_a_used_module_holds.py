"""What XLA003 says a module that a single-file run does not convert holds, as it is: an evaluation or
inference loop over the device (XLA303 there: pytorch-ddpm's Inception loop in score/both.py, GRU4REC's
``Evaluation.eval``) is said as such, with no optimizer step; a training loop still is "a training loop or
optimizer step".  And a name that imports of several project modules bind, one per branch
(P-tuning-v2's ``from tasks.<task>.get_trainer import get_trainer``), is followed to each of them: each
finding sits on the import of the module it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SCORE = """\
import torch

device = torch.device("cuda:0")


def inception_features(model, images):
    feats = []
    for batch in images:
        feats.append(model(batch.to(device)))
    return torch.cat(feats)
"""
TRAINER = """\
import torch

device = torch.device("cuda:0")


def train(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x.to(device)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
MAIN = """\
import torch

from score import inception_features


def main(model, images):
    return inception_features(model, images)
"""
BRANCHES = """\
import sys


def main(task):
    if task == "score":
        from score import inception_features as run
    else:
        from trainer import train as run
    run(None, [])
"""


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _xla003(tmp_path: Path, script: str, target: str) -> list[tuple[int, str]]:
    write_project(Path("p"), "p", {"score.py": SCORE, "trainer.py": TRAINER, "main.py": script})
    found = unfixed_findings(Path("p"), ["main.py"], target)["main.py"]
    return [(line, message) for rule, line, message in found if rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
def test_an_inference_loop_is_said_as_one(tmp_path: Path, target: str) -> None:
    ((line, message),) = _xla003(tmp_path, MAIN, target)
    assert line == 3
    assert "holds an evaluation or inference loop over the device on CUDA terms (no optimizer step)" in message
    assert "training loop or optimizer step" not in message
    assert "the loop has no step barrier: where an iteration reads no value to the host" in message


@pytest.mark.parametrize("target", TARGETS)
def test_each_import_of_a_name_bound_in_branches_names_its_own_module(tmp_path: Path, target: str) -> None:
    """The score branch's import is followed to score.py (it was the last import's module, trainer.py,
    which the call's XLA112 names already: nothing was said of score.py)."""
    found = _xla003(tmp_path, BRANCHES, target)
    assert [line for line, _ in found] == [6], found
    assert found[0][1].startswith("what this file uses of p/score.py,") and "inference loop" in found[0][1]
    assert "trainer.py" not in found[0][1]
