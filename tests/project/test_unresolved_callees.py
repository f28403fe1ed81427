"""An optimizer handed to a callable the tool can find nowhere (XLA307, training/unresolved_callees.py),
in a project on disk, in a run on the whole project and in one on the script alone: a name that only a
star import of a module outside the project may bind (SEAL's Python/Main.py: ``sys.path.append`` of
pytorch_DGCNN, cloned beside the project, and ``from main import *``, then ``loop_dataset(...,
optimizer=optimizer)``), and a name of a module of the project whose file is missing; a module the
project holds is its code (followed and converted, not reported so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SCRIPT = """\
import os
import sys
import torch
sys.path.append('%s/../../ext_lib' % os.path.dirname(os.path.realpath(__file__)))
from main import *
from util_functions import *

classifier = Classifier()
optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-4)
for epoch in range(3):
    avg_loss = loop_dataset(load_graphs(), classifier, list(range(10)), optimizer=optimizer)
"""
UTIL = """\
import numpy as np


def load_graphs():
    return list(np.arange(10))
"""
OWN_MAIN = """\
import torch


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(2, 2)


def loop_dataset(graphs, classifier, idxes, optimizer=None):
    for i in idxes:
        loss = classifier.net(torch.randn(1, 2)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _unfound(findings: dict[str, list[tuple[str, int, str]]], name: str) -> list[tuple[int, str]]:
    return [
        (line, message)
        for rule, line, message in findings[name]
        if rule == "XLA307" and "the tool cannot find" in message
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("whole", [True, False])
def test_a_name_only_an_unread_star_import_may_bind(tmp_path: Path, target: str, whole: bool) -> None:
    files = {"Python/Main.py": SCRIPT, "Python/util_functions.py": UTIL, "Python/other/tool.py": "x = 1\n"}
    folder = write_project(tmp_path / "p", "p", files)
    found = _unfound(unfixed_findings(folder, list(files) if whole else ["Python/Main.py"], target), "Main.py")
    assert [line for line, _ in found] == [11]
    message = found[0][1]
    # the readable project module's star import is not named
    assert "(the file never binds `loop_dataset`: only `from main import *` may, and the tool cannot read" in message
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert f"the step barrier (xm.optimizer_step(optimizer), then {barrier})" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_star_imported_module_the_project_holds_is_its_code(tmp_path: Path, target: str) -> None:
    """The negative control: with main.py in the project, ``loop_dataset`` is its code, converted there."""
    files = {"Python/Main.py": SCRIPT, "Python/util_functions.py": UTIL, "Python/main.py": OWN_MAIN}
    folder = write_project(tmp_path / "p", "p", files)
    assert _unfound(unfixed_findings(folder, list(files), target), "Main.py") == []


MISSING_MODULE = """\
import torch
from train.train_x import train_epoch
from train.train_x import save_model


def main(model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(3):
        train_epoch(model, optimizer, loader, epoch)
        save_model(model, optimizer)


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2), [])
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("whole", [True, False])
def test_a_name_of_a_missing_module_of_the_project(tmp_path: Path, target: str, whole: bool) -> None:
    files = {"pre/main.py": MISSING_MODULE, "pre/train/aug.py": "def aug(x):\n    return x\n"}
    folder = write_project(tmp_path / "p", "p", files)
    found = _unfound(unfixed_findings(folder, list(files) if whole else ["pre/main.py"], target), "main.py")
    assert [line for line, _ in found] == [9]  # (not the save: it steps nothing)
    assert found[0][1].startswith(
        "`train_epoch` is handed the optimizer `optimizer`, which no code the tool sees steps, and the tool cannot "
        "find `train_epoch` (it comes from `train.train_x`, a module of the project whose file is missing)"
    )
    # the negative control: with the module there, it is the project's code
    (folder / "pre/train/train_x.py").write_text(
        "def train_epoch(model, optimizer, loader, epoch):\n    optimizer.step()\n\n\n"
        "def save_model(model, optimizer):\n    print(model, optimizer)\n"
    )
    assert _unfound(unfixed_findings(folder, [*files, "pre/train/train_x.py"], target), "main.py") == []
