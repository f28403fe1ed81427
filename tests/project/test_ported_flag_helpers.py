"""A device flag the port rewrote ("cuda" -> "xla" among the choices of an options module's
``--device``) handed to a helper of another module of the project that makes a device of it and
names only "cuda" and "mps" (mace's ``init_device``: the CPU for anything else): the run that
names the XLA device trains on the CPU.  XLA111 reports it at the call in the script, naming the
helper and its module, in a run on the project (device/flag_helpers.py); a helper that passes
"xla" on (``torch.device(name)``) is not reported.  Executed: converted, ``--device xla`` trains
on the CPU, as the finding says; with the helper returning the XLA device for "xla", as the
finding says to, it trains there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, convert_folder, parse_run, run_command, run_environment
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

OPTS = """\
import argparse


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["cpu", "cuda", "mps"], default="cpu")
    return parser
"""
TOOLS = """\
import torch


def init_device(device_str):
    if "cuda" in device_str:
        return torch.device(device_str)
    if device_str == "mps":
        return torch.device("mps")
    return torch.device("cpu")
"""
PASSING_TOOLS = """\
import torch


def init_device(device_str):
    if device_str == "mps":
        return torch.device("mps")
    return torch.device(device_str)
"""
TRAIN = """\
import torch

import tools
from opts import build_parser


def main():
    args = build_parser().parse_args()
    device = tools.init_device(args.device)
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad()
        model(torch.randn(8, 4).to(device)).sum().backward()
        optimizer.step()
        print(f"step {step}")
    print("weight on", model.weight.device.type)


if __name__ == "__main__":
    main()
"""
FALL_THROUGH = '    return torch.device("cpu")\n'
FIXED = '    if device_str == "xla":\n        return torch_xla.device()\n' + FALL_THROUGH
NAMES = ["opts.py", "tools.py", "train.py"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_maps_the_ported_flag_to_the_cpu_is_reported_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(write_project(tmp_path, "helper", {"opts.py": OPTS, "tools.py": TOOLS, "train.py": TRAIN}))
    found = unfixed_findings(tmp_path, NAMES, target)
    (message,) = [message for rule, line, message in found["train.py"] if rule == "XLA111"]
    assert [line for rule, line, _ in found["train.py"] if rule == "XLA111"] == [9]
    assert '`tools.init_device()` (tools.py) returns "cpu" (the CPU) for "xla"' in message
    assert "`--device` flag that `tools.init_device(args.device)` hands it" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_passes_xla_on_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(
        write_project(tmp_path, "helper", {"opts.py": OPTS, "tools.py": PASSING_TOOLS, "train.py": TRAIN})
    )
    found = unfixed_findings(tmp_path, NAMES, target)
    assert [rule for rule, _, _ in found["train.py"] if rule == "XLA111"] == []


def _device_trained_on(folder: Path, fix: bool) -> str:
    write_project(folder, "helper", {"opts.py": OPTS, "tools.py": TOOLS, "train.py": TRAIN})
    convert_folder(folder)
    tools = folder / "tools.py"
    assert FALL_THROUGH in tools.read_text()
    if fix:
        tools.write_text("import torch_xla\n" + tools.read_text().replace(FALL_THROUGH, FIXED))
    assert 'choices=["cpu", "xla", "mps"]' in (folder / "opts.py").read_text()
    return run_command(
        [sys.executable, str(XLA_RUNNER), "train.py", "--device", "xla"], folder, run_environment(PJRT_DEVICE="CPU")
    )


@pytest.mark.executed
def test_the_converted_xla_run_trains_on_the_cpu_as_xla111_says(tmp_path: Path) -> None:
    assert "weight on cpu" in _device_trained_on(tmp_path / "as-ported", fix=False)


@pytest.mark.executed
def test_the_helper_returning_the_xla_device_trains_there(tmp_path: Path) -> None:
    """The negative control: the helper fixed as the finding asks, the same run trains on XLA, one
    graph compiled in the first step and none after it (each step's barrier, from the port)."""
    output = _device_trained_on(tmp_path / "fixed", fix=True)
    assert "weight on xla" in output
    # The runner's count at each step's print, which comes before the port's barrier ends that step.
    compiles = parse_run(output, tmp_path).compiles
    assert len(compiles) == 3 and compiles[1] > 0 and compiles[-1] == compiles[1], output
