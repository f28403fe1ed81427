"""A device chosen as ``args.device if args.device >= 0 else "cpu"`` in the script, from an int
flag that an options module without torch adds (``--device``, default -1): on an XLA host the
default run trains on the CPU and ``--device 0`` names cuda:0.  XLA111 reports the choice and
names the default, in a run on the project and in a single-file run of the script.  Executed:
converted, the default run trains on the CPU, as the finding says; with the choice made the
XLA device, as the finding says to, it trains there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, convert_folder, run_command, run_environment
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

OPTS = """\
import argparse


def build_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=3)
    return parser.parse_args()
"""
TRAIN = """\
import torch
import torch.nn as nn

from opts import build_args


def main(args):
    device = args.device if args.device >= 0 else "cpu"
    model = nn.Linear(4, 2)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(8, 4).to(device)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
    print("weight on", model.weight.device.type)


if __name__ == "__main__":
    main(build_args())
"""
CHOICE = 'device = args.device if args.device >= 0 else "cpu"'


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["opts.py", "train.py"], ["train.py"]], ids=["project", "single-file"])
def test_an_int_flag_or_the_cpu_is_reported_at_the_choice_with_its_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "index", {"opts.py": OPTS, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, names, target)
    assert found.get("opts.py", []) == []
    (message,) = [message for rule, line, message in found["train.py"] if rule == "XLA111"]
    assert [line for rule, line, _ in found["train.py"] if rule == "XLA111"] == [8]
    assert '`args.device if args.device >= 0 else "cpu"` (`--device` defaults to `-1` in opts.py)' in message
    assert "either the CPU or a CUDA index" in message


def _device_trained_on(folder: Path, choice: str) -> str:
    write_project(folder, "index", {"opts.py": OPTS, "train.py": TRAIN})
    eager = run_command([sys.executable, "train.py"], folder, run_environment())
    assert "weight on cpu" in eager
    convert_folder(folder)
    train = folder / "train.py"
    assert CHOICE in train.read_text()
    train.write_text(train.read_text().replace(CHOICE, choice))
    return run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))


@pytest.mark.executed
def test_the_converted_default_run_trains_on_the_cpu_as_xla111_says(tmp_path: Path) -> None:
    assert "weight on cpu" in _device_trained_on(tmp_path / "default", CHOICE)


@pytest.mark.executed
def test_the_choice_made_the_xla_device_trains_there(tmp_path: Path) -> None:
    """The negative control: the choice the finding asks for, the same script, trains on XLA."""
    assert "weight on xla" in _device_trained_on(tmp_path / "xla", "device = torch_xla.device()")
