"""Executed: XLA203 and a module that a class's own ``cuda`` method moves after ``__init__`` built the
optimizer (pymarl's ``QLearner``, held-out list 17: ``self.params += list(self.mixer.parameters())``, then
``def cuda(self): ... self.mixer.cuda()``, called only ``if args.use_cuda:``).  The move ran only where a
caller asked for CUDA, so XLA203 reports the optimizer instead of moving the mixer first: converted,
the CPU path of the original (``use_cuda`` False) trains like the eager original.  The negative control
is the port as it was written before (the mixer moved to the XLA device in ``__init__`` whatever the
flag): the agent's outputs stay on the CPU and the mixer's forward fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 6

LEARNER = """\
import torch


class Learner:
    def __init__(self, agent):
        self.agent = agent
        self.params = list(agent.parameters())
        self.mixer = torch.nn.Linear(2, 1)
        self.params += list(self.mixer.parameters())
        self.opt = torch.optim.SGD(self.params, lr=0.05)

    def train(self, x, y):
        self.opt.zero_grad()
        loss = ((self.mixer(self.agent(x)) - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss

    def cuda(self):
        self.agent.cuda()
        self.mixer.cuda()
"""

MAIN = """\
import torch

from learner import Learner

torch.manual_seed(0)
use_cuda = False  # (pymarl: switched off by its own check where no CUDA device is)
learner = Learner(torch.nn.Linear(4, 2))
if use_cuda:
    learner.cuda()
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(STEPS)]
for step, (x, y) in enumerate(data):
    loss = learner.train(x, y)
    print(f"step {step} loss {loss.item():.6f}")
""".replace("STEPS", str(STEPS))

FILES = {"learner.py": LEARNER, "main.py": MAIN}


def test_the_optimizer_is_reported_and_the_cpu_path_trains_like_the_original(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "cudamethod", FILES), "main.py", on_xla=False)
    assert len(eager.losses) == STEPS
    ported = converted_project(tmp_path / "ported", "cudamethod", FILES)
    learner = (ported / "learner.py").read_text()
    assert "self.params += list(self.mixer.parameters())" in learner  # no move put before the optimizer
    assert "    learner.cuda()\n" in (ported / "main.py").read_text()  # Learner.cuda: no module, no `.to`
    run = run_script(ported, "main.py")
    assert run.losses == pytest.approx(eager.losses, rel=1e-4)
    assert run.stepped_devices == ("cpu",)


def test_negative_control_the_mixer_moved_first_whatever_the_flag_fails_on_the_cpu_path(tmp_path: Path) -> None:
    ported = converted_project(tmp_path / "ported", "cudamethod", FILES)
    learner = (ported / "learner.py").read_text()
    (ported / "learner.py").write_text(
        learner.replace(
            "self.params += list(self.mixer.parameters())",
            "self.params += list(self.mixer.to(torch_xla.device()).parameters())",
        ).replace("import torch\n", "import torch\nimport torch_xla\n", 1)
    )
    result = run_script(ported, "main.py", check=False)
    assert result.returncode != 0 and "step 0 loss" not in result.output
    assert "Expected XLA tensor" in result.stderr, result.stderr[-2000:]
