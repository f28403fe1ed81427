"""Executed: SimCLR's shape.  ``args.device = torch.device("cuda:0" if ... else "cpu")``, then
``torch.load(path, map_location=args.device.type)``: on a CPU host the original loads onto "cpu";
once the device is ported, ``args.device.type`` is "xla", onto which torch.load cannot restore
storages.  XLA403 now takes the device's type for the device and loads on the CPU
(``map_location="cpu"``); load_state_dict copies the tensors to the model on XLA, which predicts as
the original did.  The negative control puts the device's type back: the load raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import eager_and_converted_runs, run_script

pytestmark = pytest.mark.executed

TRAIN = """\
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--model_fp", default="checkpoint.tar")
args = parser.parse_args()
args.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

torch.manual_seed(0)
torch.save(nn.Linear(4, 2).state_dict(), args.model_fp)
model = nn.Linear(4, 2)
model.load_state_dict(torch.load(args.model_fp, map_location=args.device.type))
model = model.to(args.device)
print("predicted", round(float(model(torch.ones(1, 4).to(args.device)).sum()), 4))
"""

LOCATION = 'map_location="cpu"'


def test_a_map_location_that_is_the_device_type_loads_on_the_cpu(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "device_type_location", {"train.py": TRAIN}, LOCATION)
    want = eager.output.split("predicted", 1)[1].split("\n", 1)[0]
    assert f"predicted{want}" in run.output, run.output[-2000:]
    # The negative control: the device's type kept, now "xla".
    script = run.folder / "train.py"
    script.write_text(script.read_text().replace(LOCATION, "map_location=args.device.type"))
    failed = run_script(run.folder, "train.py", check=False)
    assert failed.returncode != 0 and "don't know how to restore data location" in failed.stderr, failed.stderr[-2000:]
