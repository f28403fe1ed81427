"""A script that hands its training to a library's loop (BasicSR's ``train_pipeline``, XLA307)
and imports a project module whose model class steps its optimizers (GFPGAN's ``gfpgan.models``):
a run on the script alone says that converting the project would port that module, but for the
step barrier, which belongs in the library's loop, which no conversion reaches."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODELS = """\
import torch


class MyModel:
    def __init__(self, net):
        self.net = net
        self.optimizer_g = torch.optim.Adam(net.parameters())

    def optimize_parameters(self, x):
        self.optimizer_g.zero_grad()
        self.net(x).sum().backward()
        self.optimizer_g.step()
"""
SCRIPT = """\
import os.path as osp
from basicsr.train import train_pipeline

import models

if __name__ == "__main__":
    train_pipeline(osp.dirname(__file__))
"""
# The library reached through a module alias.
ALIASED = SCRIPT.replace("from basicsr.train import train_pipeline", "import basicsr.train as bt").replace(
    "    train_pipeline(", "    bt.train_pipeline("
)
# Another package's entry point, not a library loop the tool knows: nothing is said of a barrier.
NO_LIBRARY = SCRIPT.replace("from basicsr.train import train_pipeline", "from otherlib import train_pipeline")
PORT = "converting the project (`xla-codemod convert .` at its root) would port it"
BUT = (
    " except the steps' barrier: the loop that runs them is `{name}`'s (BasicSR), which no conversion of the project "
    "reaches (XLA307 says what to do)"
)


def _cross_file(tmp_path: Path, script: str, target: str) -> tuple[int, str]:
    folder = write_project(tmp_path / "p", "p", {"models.py": MODELS, "train.py": script})
    found = unfixed_findings(folder, ["train.py"], target)
    (finding,) = [(line, message) for rule, line, message in found["train.py"] if rule == "XLA003"]
    return finding


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("script", "name"), [(SCRIPT, "train_pipeline"), (ALIASED, "bt.train_pipeline")])
def test_steps_a_library_loop_drives_are_not_promised_a_port(
    tmp_path: Path, target: str, script: str, name: str
) -> None:
    line, message = _cross_file(tmp_path, script, target)
    assert line == 4
    assert message.endswith(PORT + BUT.format(name=name)), message


@pytest.mark.parametrize("target", TARGETS)
def test_steps_no_library_loop_drives_are_promised_the_port(tmp_path: Path, target: str) -> None:
    line, message = _cross_file(tmp_path, NO_LIBRARY, target)
    assert line == 4
    assert message.endswith(PORT), message
