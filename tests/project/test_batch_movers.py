"""A batch handed to a helper of another module that moves its tensors to the device in place
(``for key, val in batch.items(): batch[key] = val.cuda()``) before a model wrapped in DDP with
device_ids takes it: the port drops the device_ids, but the helper, ported too, moves the batch,
so XLA116 has nothing to say; so does a loop over a dict batch's keys that puts each value
through a helper returning it moved.  A helper called only after the forward, or one that moves
nothing, leaves the batch on the CPU: XLA116 stays, in a run on the project and in a
single-file run of the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

HELPERS = """\
import numpy as np
import torch


def to_device(batch):
    for key, val in batch.items():
        if not isinstance(val, np.ndarray):
            continue
        batch[key] = torch.from_numpy(val).float().cuda()
"""
# A helper that makes tensors of the arrays and moves nothing.
HELPERS_NO_MOVE = HELPERS.replace(".float().cuda()", ".float()")
EVALUATE = """\
import torch
from helpers import to_device


def evaluate(model, loader, rank):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    model.eval()
    results = []
    for i, batch in enumerate(loader):
        to_device(batch)
        with torch.no_grad():
            results.append(model(batch))
    return results
"""
# The helper runs after the forward: the forward gets the batch on the CPU.
EVALUATE_LATE = EVALUATE.replace(
    "        to_device(batch)\n        with torch.no_grad():\n            results.append(model(batch))\n",
    "        with torch.no_grad():\n            results.append(model(batch))\n        to_device(batch)\n",
)


def _batch_findings(folder: Path, names: list[str], target: str) -> list[tuple[str, int, str]]:
    found = unfixed_findings(folder, names, target).get("evaluate.py", [])
    return [(rule, line, message) for rule, line, message in found if rule == "XLA116"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["helpers.py", "evaluate.py"], ["evaluate.py"]], ids=["project", "single"])
def test_a_helper_that_moves_the_batch_in_place_moves_it(tmp_path: Path, target: str, names: list[str]) -> None:
    folder = write_project(tmp_path / "p", "p", {"helpers.py": HELPERS, "evaluate.py": EVALUATE})
    assert _batch_findings(folder, names, target) == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("helpers", "evaluate", "line"),
    [(HELPERS_NO_MOVE, EVALUATE, 12), (HELPERS, EVALUATE_LATE, 11)],
    ids=["no-move", "after"],
)
def test_a_helper_that_does_not_move_it_first_leaves_it_on_the_cpu(
    tmp_path: Path, target: str, helpers: str, evaluate: str, line: int
) -> None:
    assert evaluate != EVALUATE or helpers != HELPERS  # (the variants differ from the moving shape)
    folder = write_project(tmp_path / "p", "p", {"helpers.py": helpers, "evaluate.py": evaluate})
    found = _batch_findings(folder, ["helpers.py", "evaluate.py"], target)
    assert [(rule, line) for rule, line, _ in found] == [("XLA116", line)]
    assert "`batch` reaches `model` on the CPU" in found[0][2]


# audioset_tagging_cnn's pytorch/main.py: every value of the dict batch goes through a helper of
# another module that returns it moved (``return x.to(device)``), by a loop over the keys, before
# a DataParallel the port keeps (the model leaves the file) takes them.
RETURNS_MOVED = """\
import torch


def move_data_to_device(x, device):
    if "float" in str(x.dtype):
        x = torch.Tensor(x)
    elif "int" in str(x.dtype):
        x = torch.LongTensor(x)
    else:
        return x
    return x.to(device)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())
"""
# A helper that makes the tensors and moves nothing.
RETURNS_UNMOVED = RETURNS_MOVED.replace("    return x.to(device)\n", "    return x\n")
BY_KEY = """\
import torch
from helpers import count_parameters, move_data_to_device


def train(model, dataset):
    device = torch.device("cuda")
    model = torch.nn.DataParallel(model)
    model.to(device)
    print(count_parameters(model))
    optimizer = torch.optim.Adam(model.parameters())
    loader = torch.utils.data.DataLoader(dataset, batch_size=2, drop_last=True)
    for batch in loader:
        for key in batch.keys():
            batch[key] = move_data_to_device(batch[key], device)
        loss = model(batch["waveform"], batch["mixup_lambda"]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("helpers", [RETURNS_MOVED, RETURNS_UNMOVED], ids=["moved", "unmoved"])
def test_every_value_of_a_dict_batch_moved_by_key_through_a_helper(tmp_path: Path, target: str, helpers: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"helpers.py": helpers, "train.py": BY_KEY})
    found = [
        (line, message)
        for rule, line, message in unfixed_findings(folder, ["helpers.py", "train.py"], target).get("train.py", [])
        if rule == "XLA116"
    ]
    if helpers is RETURNS_MOVED:
        assert found == []
    else:
        assert [line for line, _ in found] == [15], found
        assert '`batch["waveform"]`, `batch["mixup_lambda"]` reach `model` on the CPU' in found[0][1]
