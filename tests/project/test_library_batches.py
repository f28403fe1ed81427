"""Batches from a package the tool does not follow (issue 32): in a run on a project, ``somelib``
that is no module of the project is a third-party package, so a loop feeding its batches unmoved to
a model on the XLA device is reported (XLA116), here through a tuple the call's result is unpacked
into; the same program is silent where ``somelib`` is a module of the project (its own findings
follow it) and where the call is handed the device."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
import somelib
import torch

device = torch.device("cuda")
model = torch.nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader, val_loader = somelib.make_loaders(cfg)
for x, y in train_loader:
    x, y = x.to(device), y.to(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    for x, y in val_loader:
        print(model(x))
"""
# The call handed the device (by position): the library may move its batches there.
TRAIN_HANDED = TRAIN.replace("make_loaders(cfg)", "make_loaders(cfg, device)")
SOMELIB = """\
import torch


def make_loaders(cfg, device=None):
    data = torch.utils.data.TensorDataset(torch.randn(8, 8), torch.zeros(8, dtype=torch.long))
    return torch.utils.data.DataLoader(data), torch.utils.data.DataLoader(data)
"""


def _batch_findings(folder: Path, target: str) -> list[tuple[int, str]]:
    found = unfixed_findings(folder, ["train.py"], target).get("train.py", [])
    return [(line, message) for rule, line, message in found if rule == "XLA116"]


@pytest.mark.parametrize("target", TARGETS)
def test_batches_of_a_package_the_tool_does_not_follow_are_reported(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"train.py": TRAIN})
    found = _batch_findings(folder, target)
    assert [line for line, _ in found] == [16]  # (`print(model(x))`: check reports lines of the input)
    assert found[0][1].startswith(
        "`x` reaches `model` (on the XLA device) unmoved: the batches come from `somelib.make_loaders(cfg)` of "
        "`somelib`, which the tool does not follow"
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "files", [{"train.py": TRAIN, "somelib.py": SOMELIB}, {"train.py": TRAIN_HANDED}], ids=["project-module", "handed"]
)
def test_a_project_module_or_a_call_handed_the_device_is_not_reported(
    tmp_path: Path, target: str, files: dict[str, str]
) -> None:
    folder = write_project(tmp_path / "p", "p", files)
    assert _batch_findings(folder, target) == []
