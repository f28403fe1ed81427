"""A string flag in the environment: the script sets it (``os.environ["DEVICE"] = "cpu" if
cfg.use_cpu else "cuda"``) and a module of the project compares it with strings to pick its
device (``os.getenv("DEVICE", "cuda") == "cuda"``).  The port writes no value into the
environment and leaves the strings compared as they are, so the comparison still picks the
(ported) XLA branch: no XLA105 ("False on the XLA device") and no XLA509 ("'cuda' handed to
os.getenv": following it would pick the CPU), in a run on the project or on either module
alone, for both targets.  A module that sets the variable from a device the port makes XLA's
keeps XLA105: there the comparison is False after the port."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
import os
import torch
from model import Net


def main(cfg):
    os.environ["DEVICE"] = "cpu" if cfg.use_cpu else "cuda"
    device = torch.device("cpu") if cfg.use_cpu else torch.device("cuda")
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in cfg.loader:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

MODEL = """\
import os
import torch


def table(n):
    device = torch.device("cuda") if os.getenv("DEVICE", "cuda") == "cuda" else torch.device("cpu")
    return torch.arange(n, device=device)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.lin(x) + table(2)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["train.py", "model.py"], ["model.py"], ["train.py"]])
def test_an_environment_flag_compared_with_strings_is_no_cuda_check(
    tmp_path: Path, target: str, names: list[str]
) -> None:
    folder = write_project(tmp_path / "p", "p", {"train.py": TRAIN, "model.py": MODEL})
    findings = unfixed_findings(folder, names, target)
    assert not [f for found in findings.values() for f in found if f[0] in ("XLA105", "XLA509")], findings
    assert not [f for found in findings.values() for f in found if f[0].startswith("XLA1")], findings


def test_a_flag_set_from_a_ported_device_is_false_on_xla(tmp_path: Path) -> None:
    """The negative control: the variable holds the device string the port makes "xla"."""
    train = TRAIN.replace(
        '    os.environ["DEVICE"] = "cpu" if cfg.use_cpu else "cuda"\n',
        '    kind = "cuda"\n    torch.zeros(1).to(kind)\n    os.environ["DEVICE"] = kind\n'
        '    if os.environ["DEVICE"] == "cuda":\n        print("on cuda")\n',
    )
    folder = write_project(tmp_path / "p", "p", {"train.py": train, "model.py": MODEL})
    findings = unfixed_findings(folder, ["train.py", "model.py"], "2.9")
    assert [f for f in findings["train.py"] if f[0] == "XLA105" and "is False on the XLA device" in f[2]], findings
