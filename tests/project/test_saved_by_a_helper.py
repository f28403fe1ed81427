"""A save helper of another module that moves the module it is handed to the CPU and back
(SPADE's ``save_network``: ``torch.save(net.cpu().state_dict(), path)``, then ``net.cuda()``),
called from the training loop whose optimizer steps that module: on XLA both moves replace the
module's Parameter objects and the optimizer keeps stepping the old ones.  XLA203 reports the
call, in a run on the project and in a single-file run of the script; a helper that saves the
state dict without moving the module gets nothing.  Executed: converted, the module stops
training at the save, as the finding says; with the helper the finding suggests, it trains."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, convert_folder, run_command, run_environment
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

UTIL = """\
import torch


def save_net(net, path, use_gpu):
    torch.save(net.cpu().state_dict(), path)
    if use_gpu and torch.cuda.is_available():
        net.cuda()
"""
# What the finding suggests: save the state dict (xm.save copies it to the CPU), leave the module.
UTIL_STATE_DICT = """\
import torch


def save_net(net, path, use_gpu):
    torch.save(net.state_dict(), path)
"""
TRAIN = """\
import torch
import torch.nn as nn
from util import save_net


def main():
    torch.manual_seed(0)
    use_gpu = torch.cuda.is_available()
    net = nn.Linear(4, 2)
    if use_gpu:
        net.cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(6):
        x = torch.randn(8, 4)
        if use_gpu:
            x = x.cuda()
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 2:
            save_net(net, "net.pt", use_gpu)
            before = net.weight.detach().cpu().clone()
    changed = not torch.equal(before, net.weight.detach().cpu())
    print(f"net {net.weight.device.type} trains after the save: {changed}")


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_of_another_module_that_saves_on_the_cpu_and_moves_back_is_reported_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "saves", {"util.py": UTIL, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, ["util.py", "train.py"], target)
    assert found["util.py"] == []
    ((rule, line, message),) = found["train.py"]
    assert (rule, line) == ("XLA203", 22)
    assert message.startswith('`save_net(net, "net.pt", use_gpu)` moves `net`, whose parameters `opt` steps, off the')
    assert "`save_net` (util.py) moves it back" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_script_reports_the_helper_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "saves", {"util.py": UTIL, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, ["train.py"], target)["train.py"]
    (message,) = [message for rule, line, message in found if (rule, line) == ("XLA203", 22)]
    assert "`save_net` (util.py), which this run does not convert, moves it back" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_saves_the_state_dict_without_moving_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "saves", {"util.py": UTIL_STATE_DICT, "train.py": TRAIN}))
    assert unfixed_findings(tmp_path, ["util.py", "train.py"], target) == {"util.py": [], "train.py": []}


def _trains_after_the_save(folder: Path, util: str) -> str:
    write_project(folder, "saves", {"util.py": util, "train.py": TRAIN})
    eager = run_command([sys.executable, "train.py"], folder, run_environment())
    assert "net cpu trains after the save: True" in eager
    convert_folder(folder)
    return run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))


@pytest.mark.executed
def test_the_module_saved_by_the_helper_stops_training_on_xla_as_xla203_says(tmp_path: Path) -> None:
    output = _trains_after_the_save(tmp_path / "trip", UTIL)
    assert "xm.save(net.cpu().state_dict(), path)" in (tmp_path / "trip" / "util.py").read_text()
    assert "net xla trains after the save: False" in output


@pytest.mark.executed
def test_saving_the_state_dict_as_the_finding_says_keeps_it_training(tmp_path: Path) -> None:
    """The negative control: the helper the finding suggests, the same loop, trains on XLA."""
    output = _trains_after_the_save(tmp_path / "state", UTIL_STATE_DICT)
    assert "net xla trains after the save: True" in output
