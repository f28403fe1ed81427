"""XLA307's advice for a library that builds and steps its own optimizer over the model the script
hands it (torch_ac's ``PPOAlgo``: for each epoch and batch, ``backward(); optimizer.step()`` with no
barrier, driven by ``algo.update_parameters(exps)``): an optimizer step post hook that calls the step
barrier, registered on the library's optimizer, ends each of its steps on torch_xla 2.9.  The
library is stood in for by a class of the test's own written the same way.  Executed: with the hook
every step executes a graph and nothing of them is left pending; the negative control, the same
script without the hook, leaves all sixteen steps pending on the weights."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, parse_run, run_command, run_environment

SCRIPT = """\
import torch
import torch_xla


class Algo:
    # As torch_ac's PPOAlgo: the model moved to the device it is handed, its own optimizer, and
    # update_parameters stepping it for each epoch and batch with no barrier.
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.01)

    def collect_experiences(self):
        return torch.randn(32, 4, device=self.device)

    def update_parameters(self, exps):
        for epoch in range(2):
            for batch in exps.split(16):
                loss = self.model(batch).pow(2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.losses.append(loss)


torch.manual_seed(0)
device = torch_xla.device()
algo = Algo(torch.nn.Linear(4, 2), device)
algo.losses = []
{hook}
for update in range(4):
    exps = algo.collect_experiences()
    algo.update_parameters(exps)
# What the weights still owe the device: their pending graph, in lines of IR (a few: device data).
print(f"PENDING {{len(torch_xla._XLAC._get_xla_tensors_text([algo.model.weight]).splitlines())}}")
step = 0
for loss in algo.losses:
    print(f"step {{step}} loss {{loss.item():.6f}}")
    step += 1
"""
HOOK = "algo.optimizer.register_step_post_hook(lambda *args: torch_xla.sync())"


def _ran(folder: Path, hook: str) -> tuple[int, int, int]:
    """The steps the script logged, the graphs it executed, and the lines of the weights' pending graph."""
    folder.mkdir()
    (folder / "train.py").write_text(SCRIPT.format(hook=hook))
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    run = parse_run(output, folder)
    pending = re.search(r"^PENDING (\d+)$", output, re.MULTILINE)
    assert pending is not None, output
    return len(run.losses), run.executions, int(pending.group(1))


@pytest.mark.executed
def test_a_step_hook_on_the_librarys_optimizer_ends_each_of_its_steps(tmp_path: Path) -> None:
    steps, executions, pending = _ran(tmp_path / "hooked", HOOK)
    assert steps == 16
    assert executions >= steps, executions
    assert pending <= 5, pending  # the weights are device data: no step is left pending


@pytest.mark.executed
def test_without_the_hook_the_librarys_steps_stay_pending(tmp_path: Path) -> None:
    """The negative control: without a barrier the weights carry every step of the run as one pending
    graph, which grows with each step (a new, bigger graph each time something reads them)."""
    steps, _, pending = _ran(tmp_path / "no-hook", "")
    assert steps == 16
    assert pending > 100, pending
