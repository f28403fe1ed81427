"""Batches moved through a helper of another module (XLA116, held-out list 16, DAB-DETR's
``evaluate``): ``targets = [{k: to_device(v, device) for k, v in t.items()} for t in targets]``,
where ``helpers.to_device`` returns ``item.to(device)``, moves the targets to the device the caller
hands in, as ``v.to(device)`` would: no error where the model on the XLA device and a loader that
cannot be wrapped (its ``dataset`` is read) go to ``evaluate``, in a run on the project and in a
single-file run of the script (the helper's module is not converted, but it moves to the device it
is handed).  A helper handed the CPU, or one that moves nothing, leaves them on the CPU: the error stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

HELPERS = """\
import torch


def to_device(item, device):
    if isinstance(item, torch.Tensor):
        return item.to(device)
    if isinstance(item, list):
        return [to_device(i, device) for i in item]
    return {k: to_device(v, device) for k, v in item.items()}
"""

ENGINE = """\
import torch

from helpers import to_device


def evaluate(model, data_loader, device):
    for samples, targets in data_loader:
        samples = samples.to(device)
        targets = [{k: to_device(v, device) for k, v in t.items()} for t in targets]
        print(model(samples, targets))
    print(len(data_loader.dataset))
"""

TRAIN = """\
import torch

from engine import evaluate

device = torch.device("cuda")
model = torch.nn.Linear(4, 4).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(train_set, batch_size=8)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
evaluate(model, loader, device)
"""

# Aliased, whole: ``from helpers import to_device as move``, ``targets = move(targets, device)``.
ALIASED = ENGINE.replace("import to_device", "import to_device as move").replace(
    "[{k: to_device(v, device) for k, v in t.items()} for t in targets]", "move(targets, device)"
)
# The helper is handed the CPU, or hands each item back where it is.
TO_CPU = ENGINE.replace("to_device(v, device)", 'to_device(v, "cpu")')
NO_MOVE = HELPERS.replace("return item.to(device)", "return item")

FEEDS = "which feeds the batches of its `data_loader` (`targets`) to `model` (on the XLA device) without moving them"


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _xla116(folder: Path, files: dict[str, str], target: str, whole: bool) -> list[tuple[int, str]]:
    write_project(folder, "proj", files)
    names = sorted(files) if whole else ["train.py"]
    found = unfixed_findings(folder, names, target)["train.py"]
    return [(line, message) for rule, line, message in found if rule == "XLA116"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("whole", [True, False], ids=["whole", "single"])
@pytest.mark.parametrize("engine", [ENGINE, ALIASED], ids=["comprehension", "aliased"])
def test_targets_moved_by_a_helper_reach_the_device(tmp_path: Path, target: str, whole: bool, engine: str) -> None:
    found = _xla116(tmp_path, {"helpers.py": HELPERS, "engine.py": engine, "train.py": TRAIN}, target, whole)
    assert not [message for _, message in found if FEEDS in message], found
    if whole:
        assert found == [], found


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("whole", [True, False], ids=["whole", "single"])
@pytest.mark.parametrize(
    "files",
    [{"helpers.py": HELPERS, "engine.py": TO_CPU}, {"helpers.py": NO_MOVE, "engine.py": ENGINE}],
    ids=["handed-the-cpu", "moves-nothing"],
)
def test_targets_a_helper_leaves_on_the_cpu_are_an_error(
    tmp_path: Path, target: str, whole: bool, files: dict[str, str]
) -> None:
    found = _xla116(tmp_path, {**files, "train.py": TRAIN}, target, whole)
    assert [line for line, message in found if FEEDS in message] == [14], found
