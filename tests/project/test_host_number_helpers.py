"""An evaluation loop whose meters accumulate what a helper of another module returns (CvT's
``acc1, acc5 = accuracy(outputs, y, (1, 5))`` with lib/core/evaluate.py's ``accuracy`` building its
list of ``.item()`` numbers): that module's summary says the helper returns host numbers, so the
loop accumulates nothing on the device and the port adds no barrier (no XLA303).  The near variant
whose helper returns the accuracies on the device still gets one, with the meters named."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from codemods.training.rules.meter_loop_cases import ACCURACY
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

# XLA303's accuracy helper (torchvision's, CvT's) in a module of its own.
EVALUATE = "import torch\n\n\n" + ACCURACY
ON_THE_DEVICE = EVALUATE.replace(".mul_(100.0 / target.size(0)).item())", ".mul_(100.0 / target.size(0)))")
FUNCTION = """\
import torch
from evaluate import accuracy


def test(val_loader, model, criterion, losses, top1, top5):
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            outputs = model(x)
            losses.update(criterion(outputs, y).item(), x.size(0))
            prec1, prec5 = accuracy(outputs, y, (1, 5))
            top1.update(prec1, x.size(0))
            top5.update(prec5, x.size(0))
    return top1.avg
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("evaluate", [EVALUATE, ON_THE_DEVICE], ids=["host", "device"])
def test_meters_of_what_another_modules_helper_returns(tmp_path: Path, target: str, evaluate: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"evaluate.py": evaluate, "function.py": FUNCTION})
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in ("evaluate.py", "function.py")], workers=1)
    found = [
        (f.line, f.message)
        for r in reports
        if Path(r.path).name == "function.py"
        for f in r.findings
        if f.rule == "XLA303"
    ]
    if evaluate is EVALUATE:
        assert found == []
    else:
        assert [line for line, _ in found] == [8], found
        assert "accumulates device values into `top1`, `top5`" in found[0][1]
