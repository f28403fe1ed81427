"""Executed: pymarl's ``.cuda()`` chain (tests/project/test_own_cuda_handed.py's shape, held-out list 17):
the driver builds a controller and a learner from registries filled by item assignment and calls
``learner.cuda()``; ``QLearner.cuda`` calls ``self.mac.cuda()`` (the controller handed in) and moves its
mixer, ``BasicMAC.cuda`` moves its agent.  Converted as a project, the classes' own ``cuda()`` calls stay
and the modules' moves go to the XLA device: on torch_xla 2.9 (CPU) with the move asked for, the
learner trains like the eager original on the CPU.  The negative control is the port as it was
written before (``self.mac.to(torch_xla.device())``): BasicMAC has no ``.to``, AttributeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_own_cuda_handed import CONTROLLER, CONTROLLERS, LEARNERS
from tests.support.executed import converted_project, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 6

LEARNER = """\
import copy

import torch


class QLearner:
    def __init__(self, mac, args):
        self.mac = mac
        self.target_mac = copy.deepcopy(mac)
        self.mixer = torch.nn.Linear(2, 1)
        self.opt = None

    def train(self, x, y):
        if self.opt is None:
            params = list(self.mac.parameters()) + list(self.mixer.parameters())
            self.opt = torch.optim.SGD(params, lr=0.05)
        self.opt.zero_grad()
        loss = ((self.mixer(self.mac.forward(x)) - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss

    def cuda(self):
        self.mac.cuda()
        self.target_mac.cuda()
        self.mixer.cuda()
"""

TRAIN = """\
import sys

import torch

from controllers import REGISTRY as mac_REGISTRY
from learners import REGISTRY as le_REGISTRY


def main(use_cuda):
    torch.manual_seed(0)
    mac = mac_REGISTRY["basic_mac"](None)
    learner = le_REGISTRY["q_learner"](mac, None)
    if use_cuda:
        learner.cuda()
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(STEPS)]
    for step, (x, y) in enumerate(data):
        if use_cuda:
            x, y = x.cuda(), y.cuda()
        loss = learner.train(x, y)
        print(f"step {step} loss {loss.item():.6f}")


main(sys.argv[1] == "1")
""".replace("STEPS", str(STEPS))

FILES = {
    "learners/__init__.py": LEARNERS,
    "learners/q_learner.py": LEARNER,
    "controllers/__init__.py": CONTROLLERS,
    "controllers/basic_controller.py": CONTROLLER,
    "train.py": TRAIN,
}


def test_the_classes_own_cuda_stays_and_the_learner_trains_on_xla_like_the_original(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "owncuda", FILES), "train.py", "0", on_xla=False)
    assert len(eager.losses) == STEPS
    ported = converted_project(tmp_path / "ported", "owncuda", FILES)
    assert "        self.mac.cuda()\n" in (ported / "learners/q_learner.py").read_text()
    assert "        learner.cuda()\n" in (ported / "train.py").read_text()
    run = run_script(ported, "train.py", "1")
    assert run.losses == pytest.approx(eager.losses, rel=1e-4)
    assert run.stepped_devices == ("xla",)


def test_negative_control_the_controller_moved_as_a_module_raises(tmp_path: Path) -> None:
    ported = converted_project(tmp_path / "ported", "owncuda", FILES)
    learner = ported / "learners/q_learner.py"
    text = learner.read_text().replace("self.mac.cuda()", "self.mac.to(torch_xla.device())")
    learner.write_text(
        text if "import torch_xla\n" in text else text.replace("import torch\n", "import torch\nimport torch_xla\n", 1)
    )
    result = run_script(ported, "train.py", "1", check=False)
    assert result.returncode != 0 and "step 0 loss" not in result.output
    assert "'BasicMAC' object has no attribute 'to'" in result.stderr, result.stderr[-2000:]
