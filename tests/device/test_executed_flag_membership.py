"""Executed: a device flag whose default is "cuda", checked by membership before its branches
(`assert args.device in ["cpu", "cuda", "mps"]`, then `elif args.device == "cuda":`). The port
makes the default "xla" (XLA101) and its tests with it: the list too, so the converted script,
run with its default arguments, trains on XLA like the original in eager mode (same losses, XLA
parameters stepped, no new graph after the warm-up), on torch_xla 2.9 (CPU), with the checks of
tests/support/executed.py.

Negative control: the port as it was (the default and the `==` test ported, the list left with
"cuda") stops at the assert before training."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, converted_project, run_script, training_problems
from tests.support.projects import write_project
from tests.support.training_programs import batches_loop

pytestmark = pytest.mark.executed

STEPS = 10

TRAIN = f"""\
import argparse

import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-device", default="cuda")
    args = parser.parse_args()
    assert args.device in ["cpu", "cuda", "mps"], f"unknown device {{args.device}}"
    if args.device == "cpu":
        device = torch.device("cpu")
    elif args.device == "cuda":
        device = torch.device("cuda")
    else:
        device = torch.device("mps")
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range({STEPS})]
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""" + batches_loop("        x, y = x.to(device), y.to(device)\n")


def test_the_flags_membership_test_is_ported_with_its_default_and_the_script_trains_on_xla(tmp_path: Path) -> None:
    eager = run_script(
        write_project(tmp_path / "eager", "flag", {"train.py": TRAIN}), "train.py", "-device", "cpu", on_xla=False
    )
    folder = converted_project(tmp_path / "ported", "flag", {"train.py": TRAIN})
    ported = (folder / "train.py").read_text()
    assert 'default="xla"' in ported and '["cpu", "xla", "mps"]' in ported
    run = run_script(folder, "train.py")
    assert len(eager.losses) == STEPS
    problems = training_problems(run, eager, Executed("train.py"))
    assert not problems, problems


def test_with_the_list_left_as_it_was_the_new_default_fails_the_assert(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "old", "flag", {"train.py": TRAIN})
    script = folder / "train.py"
    ported = script.read_text()
    script.write_text(ported.replace('["cpu", "xla", "mps"]', '["cpu", "cuda", "mps"]'))
    assert 'default="xla"' in ported and 'args.device == "xla"' in ported
    run = run_script(folder, "train.py", check=False)
    assert run.returncode != 0
    assert "AssertionError: unknown device xla" in run.stderr
    assert "step 0 loss" not in run.output
