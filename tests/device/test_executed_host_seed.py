"""Executed: a perturbation replayed from its seed (MeZO's zeroth-order step: ``torch.manual_seed(seed)``,
then ``z`` drawn on the parameters' device and added; the same seed again, the same ``z`` subtracted),
on torch_xla 2.9 (CPU).  torch.manual_seed leaves the XLA device's generator alone, so XLA515 adds
``torch_xla.manual_seed(seed)`` after it: converted, the parameters come back where they were, as they
do in the original on the CPU.

Negative control: the converted script without that line draws another ``z`` the second time, and the
parameters do not come back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.executed import eager_and_converted_script, run_script

pytestmark = pytest.mark.executed

TRAIN = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).to(device)
before = [p.detach().cpu().clone() for p in model.parameters()]


def perturb(scale, seed):
    torch.manual_seed(seed)
    for p in model.parameters():
        z = torch.normal(mean=0, std=1, size=p.shape, device=p.device, dtype=p.dtype)
        p.data.add_(scale * 1e-3 * z)


for seed in (7, 8):
    perturb(1, seed)
    perturb(-1, seed)
after = [p.detach().cpu() for p in model.parameters()]
print(f"drift {max((a - b).abs().max().item() for a, b in zip(after, before))}")
"""
SEEDED = "    torch.manual_seed(seed)\n    torch_xla.manual_seed(seed)\n"


def drift(output: str) -> float:
    (value,) = re.findall(r"^drift (\S+)$", output, re.MULTILINE)
    return float(value)


def test_the_replayed_perturbation_cancels_on_the_xla_device(tmp_path: Path) -> None:
    converted, run, eager = eager_and_converted_script(tmp_path, "train.py", TRAIN)
    assert SEEDED in converted and "device = torch_xla.device()" in converted, converted
    assert converted.count("torch_xla.manual_seed(") == 2, converted  # the module's seed and the replayed one
    assert drift(eager.output) < 1e-6
    assert drift(run.output) < 1e-6, run.output


def test_without_the_device_seed_the_perturbation_does_not_cancel(tmp_path: Path) -> None:
    converted, _, _ = eager_and_converted_script(tmp_path, "train.py", TRAIN)
    unseeded = tmp_path / "unseeded"
    unseeded.mkdir()
    (unseeded / "train.py").write_text(converted.replace(SEEDED, "    torch.manual_seed(seed)\n"))
    assert drift(run_script(unseeded, "train.py").output) > 1e-4
