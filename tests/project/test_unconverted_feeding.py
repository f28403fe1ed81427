"""A model on the XLA device and a DataLoader handed to a function of a module the run does not
convert (a single-file run) whose loop feeds the model batches it never moves (on CUDA the
model's DataParallel scattered them; without CUDA devices it calls the model directly): XLA116
at the call, naming the function and the batches, besides XLA003's report of the module's CUDA
moves.  A whole run wraps the loader instead (XLA302).  A function that moves each batch itself
gives no XLA116 (its `.cuda()` is XLA003's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

FUNCTION = """import torch


def get_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)


def train(loader, model, criterion, optimizer):
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

MOVING = FUNCTION.replace("        out = model(x)\n", "        out = model(x.cuda())\n")

TRAIN = """import torch{alias}

from function import get_optimizer, train


def main(train_set):
    model = {torch}.nn.DataParallel({torch}.nn.Linear(4, 1), device_ids=[0]).cuda()
    criterion = {torch}.nn.MSELoss().cuda()
    optimizer = get_optimizer(model)
    train_loader = {torch}.utils.data.DataLoader(train_set, batch_size=8)
    for epoch in range(3):
        train(train_loader, model, criterion, optimizer)
"""


def _project(folder: Path, function: str, alias: bool) -> Path:
    train = TRAIN.format(alias=" as th" if alias else "", torch="th" if alias else "torch")
    return write_project(folder, "feeding", {"function.py": function, "train.py": train})


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("alias", [False, True], ids=["torch", "alias"])
def test_a_loader_handed_to_an_unconverted_function_that_feeds_it_unmoved_is_an_error(
    tmp_path: Path, target: str, alias: bool
) -> None:
    folder = _project(tmp_path, FUNCTION, alias)
    found = unfixed_findings(folder, ["train.py"], target)["train.py"]
    batches = [(line, text) for rule, line, text in found if rule == "XLA116"]
    assert [line for line, _ in batches] == [12], found
    assert batches[0][1].startswith("`train_loader` goes to `train` (in "), batches
    assert batches[0][1].endswith(
        "function.py, which this run does not convert), which feeds the batches of its `loader` (`x`) to `model` (on "
        "the XLA device) without moving them: the forward fails there; move each batch to the device before the "
        "forward in that function (`x = x.to(device)`), or convert that module too (a run on the project folder wraps "
        "the loader where it can)"
    ), batches
    assert any(rule == "XLA003" for rule, _, _ in found), found
    whole = unfixed_findings(folder, ["train.py", "function.py"], target)
    assert not [f for fs in whole.values() for f in fs if f[0] == "XLA116"], whole


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_unconverted_function_that_moves_each_batch_gives_no_batch_error(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path, MOVING, False)
    found = unfixed_findings(folder, ["train.py"], target)["train.py"]
    assert not [f for f in found if f[0] == "XLA116"], found
    assert any(rule == "XLA003" for rule, _, _ in found), found
