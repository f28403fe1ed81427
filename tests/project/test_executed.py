"""Executed: obligation 2 (the optimizer holds the parameters as they are after the move)
across a project, on torch_xla 2.9 (CPU).  Moving a module to XLA replaces its Parameter
objects, so an optimizer built before the move steps CPU copies: the ported project must
train the moved model, and the same project converted without XLA203 must not (the
negative control shows the shapes are what breaks training)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import (
    XLA_RUNNER,
    convert_folder,
    optimizer_problems,
    parse_run,
    run_command,
    run_environment,
)

pytestmark = pytest.mark.executed

MODELS = """\
import torch
import torch.nn as nn


class TwoPart(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.vision(x)))
"""

# Shape 1: parameter groups of a model handed in, moved later in the same function
# (through DataParallel).  Shape 2: a class of another module moves ``kwargs["model"]``
# after the caller built the optimizer.
TRAINING = """\
import torch
import torch.nn as nn


def fit(model, batches, lr):
    optimizer = torch.optim.SGD(params=[{"params": model.vision.parameters(), "lr": lr},
                                        {"params": model.head.parameters(), "lr": 0.5 * lr}], momentum=0.9)
    model = nn.DataParallel(model)
    model.cuda()
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item()}")
    return model


class Learner:
    def __init__(self, **kwargs):
        self.model = kwargs["model"].cuda()
        self.optimizer = kwargs["optimizer"]

    def train(self, batches):
        for step, (x, y) in enumerate(batches):
            self.optimizer.zero_grad()
            loss = ((self.model(x.cuda()) - y.cuda()) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            print(f"step {step} loss {loss.item()}")
"""

MAIN = """\
import torch
from models import TwoPart
from training import Learner, fit


def changed(before, module):
    after = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    return any(not torch.equal(before[k], after[k]) for k in before)


def main():
    torch.manual_seed(0)
    batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(6)]
    grouped = TwoPart()
    before = {k: v.detach().clone() for k, v in grouped.state_dict().items()}
    fit(grouped, batches, 0.05)
    print(f"grouped {next(grouped.parameters()).device.type} changed {changed(before, grouped)}")
    handed = TwoPart()
    before = {k: v.detach().clone() for k, v in handed.state_dict().items()}
    optimizer = torch.optim.Adam(handed.parameters(), 1e-2)
    learner = Learner(model=handed, optimizer=optimizer)
    learner.train(batches)
    print(f"handed {next(learner.model.parameters()).device.type} changed {changed(before, learner.model)}")


if __name__ == "__main__":
    main()
"""

RESULT = re.compile(r"^(grouped|handed) (\w+) changed (True|False)$", re.MULTILINE)


def _converted_run(
    folder: Path, selection: RuleSelection | None = None
) -> tuple[dict[str, tuple[str, bool]], str, list[str]]:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'o2'\n")
    (folder / "models.py").write_text(MODELS)
    (folder / "training.py").write_text(TRAINING)
    (folder / "main.py").write_text(MAIN)
    convert_folder(folder, selection)
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    results = {name: (device, flag == "True") for name, device, flag in RESULT.findall(output)}
    return (
        results,
        (folder / "main.py").read_text() + (folder / "training.py").read_text(),
        optimizer_problems(parse_run(output, folder)),
    )


def test_optimizers_built_before_their_models_move_train_the_moved_models_once_ported(tmp_path: Path) -> None:
    results, code, problems = _converted_run(tmp_path / "ported")
    assert "model.vision.to(torch_xla.device()).parameters()" in code
    assert "torch.optim.Adam(handed.to(torch_xla.device()).parameters(), 1e-2)" in code
    assert results == {"grouped": ("xla", True), "handed": ("xla", True)}
    assert not problems


def test_without_the_port_the_moved_models_keep_their_initial_weights(tmp_path: Path) -> None:
    """The negative control: the same project converted with XLA203 off runs on XLA, but its
    optimizers step the CPU copies the moves replaced, and the moved models never change."""
    results, code, problems = _converted_run(tmp_path / "unported", RuleSelection(ignore=("XLA203",)))
    assert "torch.optim.Adam(handed.parameters(), 1e-2)" in code
    assert results == {"grouped": ("xla", False), "handed": ("xla", False)}
    assert problems == ["the optimizers stepped parameters on cpu, not only on xla"]


OWN_NETS = """\
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optim = optim.SGD(params=self.parameters(), lr=0.1)

    def forward(self, x):
        return self.fc(x)
"""

OWN_MAIN = """\
import torch
import nets


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    G = nets.Generator().to(device)
    before = {k: v.detach().cpu().clone() for k, v in G.state_dict().items()}
    for step in range(4):
        G.optim.zero_grad()
        loss = (G(torch.randn(8, 4).to(device)) ** 2).mean()
        loss.backward()
        G.optim.step()
    after = {k: v.detach().cpu() for k, v in G.state_dict().items()}
    changed = any(not torch.equal(before[k], after[k]) for k in before)
    print(f"own {next(G.parameters()).device.type} changed {changed}")


if __name__ == "__main__":
    main()
"""


def test_a_class_that_builds_its_own_optimizer_and_moves_later_trains_nothing_as_xla203_says(tmp_path: Path) -> None:
    """BigGAN's shape, which XLA203 reports at the move and does not port: converted, the
    script runs on XLA, but ``G.optim`` steps the CPU parameters the move replaced, so the
    model never changes (the error says so)."""
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'own'\n")
    (folder / "nets.py").write_text(OWN_NETS)
    (folder / "main.py").write_text(OWN_MAIN)
    convert_folder(folder)
    assert "G = nets.Generator().to(device)" in (folder / "main.py").read_text()
    output = run_command([sys.executable, str(XLA_RUNNER), "main.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    assert "own xla changed False" in output
