"""An Accelerate script whose training loop is in another module, handed the Accelerator it
built and the model, optimizer and loaders it prepared (``train(model, loader, accelerator,
optimizer)``, the loop calling ``accelerator.backward(loss)`` and ``optimizer.step()``): on XLA
the prepared loader ends each step (MpDeviceLoader) and the prepared optimizer reduces the
gradients, so the loop needs neither a barrier (XLA301) nor xm.optimizer_step (XLA201), in a
run on the project or on the loop's module alone.  The same loop with a tensor's own
``loss.backward()`` and no Accelerator still gets both."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

MAIN = """\
from accelerate import Accelerator

from train_utils import train


def main():
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(build_model(), build_optimizer(), build_loader())
    train(model, loader, accelerator, optimizer)


if __name__ == "__main__":
    main()
"""

TRAIN_UTILS = """\
import torch


def train(model, loader, accelerator, optimizer):
    model.train()
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["main.py", "train_utils.py"], ["train_utils.py"], ["main.py"]])
def test_a_loop_stepped_with_a_handed_accelerator_needs_no_barrier(
    tmp_path: Path, target: str, names: list[str]
) -> None:
    folder = write_project(tmp_path / "p", "p", {"main.py": MAIN, "train_utils.py": TRAIN_UTILS})
    findings = _findings(folder, names, target)
    assert not {rule for rule, _ in findings} & {"XLA201", "XLA301", "XLA003"}, findings
    if "train_utils.py" in names:
        assert ("XLA807", "train_utils.py") in findings  # the Accelerate loop, said as such


@pytest.mark.parametrize("target", TARGETS)
def test_the_same_loop_without_accelerate_gets_the_barrier(tmp_path: Path, target: str) -> None:
    plain = TRAIN_UTILS.replace("accelerator.backward(loss)", "loss.backward()")
    folder = write_project(tmp_path / "p", "p", {"train_utils.py": plain})
    assert {("XLA201", "train_utils.py"), ("XLA301", "train_utils.py")} <= _findings(folder, ["train_utils.py"], target)


def _findings(folder: Path, names: list[str], target: str) -> set[tuple[str, str]]:
    """The rules of every finding (fixed or not) of a check run on ``names``, with their file."""
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {(f.rule, Path(report.path).name) for report in reports for f in report.findings}
