"""XLA203's port of an optimizer a library builds over the module it is handed (mmcv's
``build_optimizer(model, cfg)``) before the model moves: ``build_optimizer(model.to(device), cfg)``.
The library is stood in for by a package of the test's own outside the project (``mmcv.runner``, whose
``build_optimizer`` builds SGD over ``model.parameters()``, as mmcv's DefaultOptimizerConstructor
does), so the tool sees it as a library.  Executed on torch_xla 2.9 (CPU): the ported script's weights
change; the negative control, the same script converted with XLA203 off, steps the stale CPU
Parameters and its XLA weights never change."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from tests.support.executed import XLA_RUNNER, converted_project, parse_run, run_command, run_environment

SCRIPT = """\
import torch
from mmcv.runner import build_optimizer


def train(model, cfg, batches):
    optimizer = build_optimizer(model, cfg)
    model = model.cuda()
    for step, x in enumerate(batches):
        optimizer.zero_grad()
        model(x.cuda()).pow(2).mean().backward()
        optimizer.step()
        print(f"step {step}")
    return model


torch.manual_seed(0)
net = torch.nn.Linear(4, 2)
before = net.weight.detach().clone()
trained = train(net, {"lr": 0.1}, [torch.randn(8, 4) for _ in range(3)])
print(f"CHANGED {not torch.equal(trained.weight.detach().cpu(), before)}")
"""
LIBRARY = """\
import torch


def build_optimizer(model, cfg):
    return torch.optim.SGD(model.parameters(), lr=cfg["lr"])
"""


def _changed(tmp_path: Path, selection: RuleSelection | None) -> tuple[bool, list[int]]:
    """Whether the weights changed, and the graphs compiled by each step's print (before the
    port's barrier ends that step)."""
    library = tmp_path / "site"
    (library / "mmcv" / "runner").mkdir(parents=True)
    (library / "mmcv" / "__init__.py").write_text("")
    (library / "mmcv" / "runner" / "__init__.py").write_text(LIBRARY)
    folder = converted_project(tmp_path / "p", "p", {"train.py": SCRIPT}, selection)
    converted = (folder / "train.py").read_text()
    assert "model.cuda()" not in converted, converted
    env = run_environment(PJRT_DEVICE="CPU", PYTHONPATH=str(library))
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, env)
    changed = re.search(r"^CHANGED (True|False)$", output, re.MULTILINE)
    assert changed is not None, output
    return changed.group(1) == "True", parse_run(output, folder).compiles


@pytest.mark.executed
def test_the_model_moved_first_trains(tmp_path: Path) -> None:
    changed, compiles = _changed(tmp_path, None)
    assert changed
    assert len(compiles) == 3 and compiles[1] > 0 and compiles[-1] == compiles[1], compiles  # none after warm-up


@pytest.mark.executed
def test_without_the_port_the_optimizer_steps_stale_copies(tmp_path: Path) -> None:
    """The negative control: XLA203 off, the optimizer holds the CPU Parameters the move replaced."""
    assert not _changed(tmp_path, RuleSelection(ignore=("XLA203",)))[0]
