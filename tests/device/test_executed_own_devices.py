"""Executed: a tensor's own device that a model-parallel branch hands to ``torch.cuda.set_device``
(trlx's hydra branches) stays as written, and the converted script runs on XLA (PJRT_DEVICE=CPU)
with its tensors made on the XLA device; the negative control puts a CUDA index where the
tensor's own device was and fails ("Found no NVIDIA driver")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import convert_folder, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

TRAIN = """\
import torch


class Branch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.model_parallel = False
        self.head = torch.nn.Linear(4, 2)

    def forward(self, hidden_states, attention_mask):
        length = hidden_states.size(1)
        device = hidden_states.device
        positions = torch.arange(length, device=device).float()
        if self.model_parallel:
            torch.cuda.set_device(hidden_states.device)
            attention_mask = attention_mask.to(hidden_states.device)
        return self.head(hidden_states + positions[None, :, None] * attention_mask[..., None]), positions


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Branch().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        hidden = torch.randn(2, 3, 4).to(device)
        mask = torch.ones(2, 3).to(device)
        out, positions = model(hidden, mask)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item()}")
    print("positions on", positions.device)


if __name__ == "__main__":
    main()
"""


def test_a_tensors_own_device_stays_and_runs_on_xla(tmp_path: Path) -> None:
    write_project(tmp_path, "own_device", {"train.py": TRAIN})
    convert_folder(tmp_path)
    output = (tmp_path / "train.py").read_text()
    assert "device = hidden_states.device" in output and "torch.arange(length, device=device)" in output
    assert "attention_mask.to(hidden_states.device)" in output and "set_device" not in output
    assert "positions on xla:0" in run_script(tmp_path, "train.py", runner=False).output
    (tmp_path / "train.py").write_text(output.replace("device = hidden_states.device", "device = 0"))
    failed = run_script(tmp_path, "train.py", runner=False, check=False)
    assert failed.returncode != 0 and "Found no NVIDIA driver" in failed.stderr, failed.stderr[-3000:]
