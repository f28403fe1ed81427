"""A device flag a config class of another module sets to CUDA's availability check
(``self.use_accelerator = torch.cuda.is_available()``), read where the device is picked
(``torch.device("cuda" if cfg.use_accelerator else "cpu")``): the port makes "cuda" the XLA
device, but the flag is False on an XLA host, so the model stays on the CPU: an error (XLA111)
at the move, naming the flag and its module; none when the project also sets the flag otherwise
(not known), or where the flag picks nothing; and the single-file run of the script that imports
the trainer no longer says that converting the project would port it all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SETTINGS = """\
import torch


class Settings:
    def __init__(self):
        self.rate = 0.05
        self.use_accelerator = torch.cuda.is_available()
"""
RUNNER = """\
import torch


class Runner:
    def __init__(self, settings):
        self.settings = settings
        self.net = torch.nn.Linear(3, 1)
        self.net.to(torch.device("cuda" if self.settings.use_accelerator else "cpu"))
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=settings.rate)

    def fit(self, batches):
        for batch in batches:
            x = batch.to(next(self.net.parameters()).device)
            loss = self.net(x).sum()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
"""
MAIN = """\
import torch

import runner as rn
from conf.settings import Settings

if __name__ == "__main__":
    rn.Runner(Settings()).fit([torch.ones(2, 3)])
"""


def _project(tmp_path: Path, settings: str = SETTINGS) -> Path:
    return write_project(
        tmp_path / "flags",
        "flags",
        {"conf/__init__.py": "", "conf/settings.py": settings, "runner.py": RUNNER, "main.py": MAIN},
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_checked_flag_of_another_module_is_an_error_at_the_move(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path)
    found = unfixed_findings(folder, ["main.py", "runner.py", "conf/settings.py"], target)
    errors = [(line, message) for rule, line, message in found["runner.py"] if rule == "XLA111"]
    assert [line for line, _ in errors] == [8]
    assert "`self.settings.use_accelerator` is `torch.cuda.is_available()` (`self.use_accelerator` in " in errors[0][1]
    assert "settings.py), False on an XLA host" in errors[0][1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_flag_the_project_also_sets_otherwise_is_not_known(tmp_path: Path, target: str) -> None:
    settings = SETTINGS + "\n    def force(self):\n        self.use_accelerator = True\n"
    folder = _project(tmp_path, settings)
    found = unfixed_findings(folder, ["main.py", "runner.py", "conf/settings.py"], target)
    assert not [message for rule, _, message in found["runner.py"] if rule == "XLA111"]


def test_the_single_file_run_does_not_promise_the_project_run_ports_it(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    found = unfixed_findings(folder, ["main.py"], "2.9")
    cross = [message for rule, _, message in found["main.py"] if rule == "XLA003" and "runner.py" in message]
    assert cross
    assert all(not message.endswith("would port it") for message in cross)
