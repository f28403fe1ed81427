"""A CUDA default tensor type set under a CUDA check in the script (recurrent-ppo-truncated-bptt's
train.py) while another module of the project makes the model's inputs without a device
(`torch.tensor(obs)`, `torch.zeros(...)`): in a run on the project, the 2.9 port makes it the XLA
default device (XLA107, fixed) and drops the check (XLA104), so no warning is left there; the
sagemaker target's torch has no default device, so it is an error there, at the call."""

from __future__ import annotations

from pathlib import Path

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TRAIN = """\
import torch

from trainer import Trainer


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        torch.set_default_tensor_type("torch.cuda.FloatTensor")
    Trainer(device).run()


if __name__ == "__main__":
    main()
"""
TRAINER = """\
import numpy as np
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, device):
        self.model = nn.LSTM(4, 8).to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def run(self):
        for step in range(3):
            obs = np.zeros((1, 16, 4), np.float32)
            out, _ = self.model(torch.tensor(obs), (torch.zeros(1, 16, 8), torch.zeros(1, 16, 8)))
            loss = out.pow(2).mean()
            loss.backward()
            self.optimizer.step()
"""


def _train_findings(tmp_path: Path, target: str) -> list[tuple[str, int, str, bool]]:
    folder = write_project(tmp_path / "ppo", "ppo", {"train.py": TRAIN, "trainer.py": TRAINER})
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in ("train.py", "trainer.py")], workers=1)
    train = next(report for report in reports if Path(report.path).name == "train.py")
    return [(f.rule, f.line, f.message, f.fixed) for f in train.findings]


def test_the_project_run_ports_the_default_type_and_drops_its_check(tmp_path: Path) -> None:
    found = _train_findings(tmp_path, "2.9")
    default = [f for f in found if f[0] == "XLA107"]
    assert [(line, fixed) for _, line, _, fixed in default] == [(9, True)]
    assert "torch.set_default_device(torch_xla.device())" in default[0][2]
    assert [(rule, line, fixed) for rule, line, _, fixed in found if rule == "XLA104"] == [("XLA104", 8, True)]
    assert not [f for f in found if f[0] == "XLA105"]


def test_the_sagemaker_target_reports_the_default_type_at_the_call(tmp_path: Path) -> None:
    found = _train_findings(tmp_path, "sagemaker")
    default = [(line, message) for rule, line, message, fixed in found if rule == "XLA107" and not fixed]
    assert [line for line, _ in default] == [9]
    assert "has no `torch.set_default_device`" in default[0][1]
    assert "stay on the CPU while the model is on the XLA device" in default[0][1]
