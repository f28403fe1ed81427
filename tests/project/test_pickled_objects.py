"""A pickled object that holds a module, loaded by a helper module (``gru = torch.load(path,
map_location=device)``, then ``gru.model.eval()``) and evaluated by the script that calls it, with
its batches on the device: XLA cannot load onto its device, so the load comes back on the CPU, and
nothing moves the module the object holds.  A run on the project reports it (an error, XLA403) at
the load; a helper that moves the module after the load gets only the map location."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import convert_folder
from tests.support.projects import unfixed_findings, write_project

HELPER = """\
import torch


def load_trainer(path, device):
    trainer = torch.load(path, map_location=device){moved}
    trainer.model.eval()
    return trainer
"""
SCRIPT = """\
import torch

from helpers import load_trainer

device = torch.device("cuda:0")
trainer = load_trainer("trainer.pt", device)
with torch.no_grad():
    for x, y in loader:
        print(trainer.model(x.to(device)).sub(y.to(device)).abs().mean())
"""


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_pickled_object_holding_a_module_is_reported_at_its_load(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path, "pickled", {"helpers.py": HELPER.format(moved=""), "run.py": SCRIPT})
    unfixed = unfixed_findings(folder, ["helpers.py", "run.py"], target)
    assert [(rule, line) for rule, line, _ in unfixed["helpers.py"]] == [("XLA403", 5)], unfixed
    assert "`trainer.model` with it" in unfixed["helpers.py"][0][2]
    assert not [finding for finding in unfixed["run.py"] if finding[0] == "XLA403"], unfixed


def test_the_report_stays_on_the_converted_project(tmp_path: Path) -> None:
    """Converted, the load is on the CPU and the helper asks for the XLA device (its default device):
    the error stays (a second run does not pass what the first reported).  A helper that names no
    device at all, converted, is not reported again (the caller's device is not followed there)."""
    helper = HELPER.format(moved="").replace("(path, device)", '(path, device=torch.device("cuda:0"))')
    folder = write_project(tmp_path, "pickled", {"helpers.py": helper, "run.py": SCRIPT})
    convert_folder(folder)
    assert 'map_location="cpu"' in (folder / "helpers.py").read_text()
    assert "device=torch_xla.device()" in (folder / "helpers.py").read_text()
    unfixed = unfixed_findings(folder, ["helpers.py", "run.py"], "2.9")
    assert [(rule, line) for rule, line, _ in unfixed["helpers.py"]] == [("XLA403", 6)], unfixed


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_helper_that_moves_the_module_after_the_load_is_not_reported(tmp_path: Path, target: str) -> None:
    moved = "\n    trainer.model.to(device)"
    folder = write_project(tmp_path, "pickled", {"helpers.py": HELPER.format(moved=moved), "run.py": SCRIPT})
    unfixed = unfixed_findings(folder, ["helpers.py", "run.py"], target)
    assert unfixed["helpers.py"] == [], unfixed
