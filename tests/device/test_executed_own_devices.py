"""Executed: a tensor's own device that a model-parallel branch hands to ``torch.cuda.set_device``
(trlx's hydra branches) stays as written, and the converted script runs on XLA (PJRT_DEVICE=CPU)
with its tensors made on the XLA device: it trains like the original's eager run (same losses), with
one graph run per step and no new graph after the warm-up, as the runner counts them.  The negative
control puts a CUDA index where the tensor's own device was and fails ("Found no NVIDIA driver")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import Executed, barrier_per_step_problems, eager_and_converted_runs, run_script

pytestmark = pytest.mark.executed

STEPS = 8
TRAIN = f"""\
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
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Branch().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range({STEPS}):
        hidden = torch.randn(2, 3, 4).to(device)
        mask = torch.ones(2, 3).to(device)
        out, positions = model(hidden, mask)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {{step}} loss {{loss.item()}}")
    print("positions on", positions.device)


if __name__ == "__main__":
    main()
"""


def test_a_tensors_own_device_stays_and_runs_on_xla(tmp_path: Path) -> None:
    eager, run = eager_and_converted_runs(tmp_path, "own_device", {"train.py": TRAIN}, "device = hidden_states.device")
    script = run.folder / "train.py"
    output = script.read_text()
    assert "torch.arange(length, device=device)" in output, output
    assert "attention_mask.to(hidden_states.device)" in output and "set_device" not in output, output
    assert "positions on cpu" in eager.output and "positions on xla:0" in run.output, run.output
    assert len(eager.losses) == STEPS, eager.output
    # The same losses as the eager run, and the graph counts the runner measured: one graph run per
    # step, none new after the warm-up.
    problems = barrier_per_step_problems(run, eager, Executed("train.py"), STEPS)
    assert not problems, problems
    script.write_text(output.replace("device = hidden_states.device", "device = 0"))
    failed = run_script(run.folder, "train.py", runner=False, check=False)
    assert failed.returncode != 0 and "Found no NVIDIA driver" in failed.stderr, failed.stderr[-3000:]
