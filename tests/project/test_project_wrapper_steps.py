"""A project's optimizer wrapper, defined in a class of one module (``Algorithm.Optimizer``, whose
own ``step(loss)`` runs backward and steps the optimizer it holds), stepped as
``self.optim.step(loss)`` in a subclass in another module that builds it through an inherited
method: the wrapper's inner step is ported where the class is (XLA201, fixed), and the call with
the loss is that wrapper's step, not a torch optimizer's with arguments it cannot pass on: no
"stays as written" error (a wrapper the tool cannot see keeps it: XLA201's case
wrapper-step-key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

ALGO = """\
import torch


class Algorithm(torch.nn.Module):
    class Optimizer:
        def __init__(self, optim):
            self._optim = optim

        def step(self, loss):
            self._optim.zero_grad()
            loss.backward()
            self._optim.step()

    def _create_optimizer(self, module):
        return self.Optimizer(torch.optim.Adam(module.parameters()))
"""

DQN = """\
from algo import Algorithm


class DQN(Algorithm):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.optim = self._create_optimizer(model)

    def update(self, batch):
        loss = self.model(batch).sum()
        self.optim.step(loss)
        return loss
"""

TRAIN = """\
import torch

from dqn import DQN


def main(loader):
    algo = DQN(torch.nn.Linear(4, 2).cuda())
    for batch in loader:
        algo.update(batch.cuda())
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_step_with_a_loss_on_the_projects_wrapper_is_no_error(tmp_path: Path, target: str) -> None:
    files = {"algo.py": ALGO, "dqn.py": DQN, "train.py": TRAIN}
    folder = write_project(tmp_path, "wrapped", files)
    found = unfixed_findings(folder, list(files), target)
    assert not [m for f in found.values() for rule, _, m in f if rule == "XLA201"], found
