"""Executed: a state dict whose tensors are set into a module as they are (transformers'
``low_cpu_mem_usage`` load: ``new_val = state_dict[k]``, ``torch.nn.Parameter(new_val)``,
``setattr(submodule, name, new_val)``), on torch_xla 2.9 (CPU).  The port moves none of those tensors
(XLA403): the model checks its loaded weights on the CPU, then moves to the XLA device and trains
there with the eager original's losses.  The negative control, the port's old form (each tensor
moved to XLA as "a pickled module"): the model is left part on XLA, part on the CPU, and its CPU
check fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, loss_problems, run_script, xla_problems
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

STEPS = 6
WARMUP = 2  # steps that may compile; the rest reuse their graphs
TRAIN = f"""\
import torch
import torch.nn as nn
import torch.nn.functional as F


def find(model, key):
    *path, name = key.split(".")
    submodule = model
    for part in path:
        submodule = getattr(submodule, part)
    return submodule, name


def load_low_memory(model, archive):
    state_dict = torch.load(archive, map_location="cpu")
    for k in list(state_dict)[:2]:
        submodule, name = find(model, k)
        new_val = state_dict[k]
        if isinstance(getattr(submodule, name), torch.nn.Parameter):
            new_val = torch.nn.Parameter(new_val)
        setattr(submodule, name, new_val)


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.save(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).state_dict(), "weights.pt")
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    load_low_memory(model, "weights.pt")
    print(f"check {{model(torch.ones(1, 4)).sum().item():.6f}}")
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range({STEPS}):
        x = torch.randn(16, 4)
        loss = F.mse_loss(model(x.to(device)), x[:, :2].sin().to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item():.6f}}")


if __name__ == "__main__":
    main()
"""
OLD_PORT = ("new_val = state_dict[k]", "new_val = state_dict[k].to(torch_xla.device())")


def _converted(tmp_path: Path) -> tuple[Path, str]:
    folder = converted_project(tmp_path / "xla", "lowmem", {"train.py": TRAIN})
    converted = (folder / "train.py").read_text()
    assert "new_val = state_dict[k]\n" in converted and "device = torch_xla.device()" in converted, converted
    return folder, converted


def test_the_state_dict_set_into_the_module_stays_where_it_is(tmp_path: Path) -> None:
    eager = run_script(write_project(tmp_path / "eager", "lowmem", {"train.py": TRAIN}), "train.py", on_xla=False)
    assert len(eager.losses) == STEPS, eager.output
    folder, _ = _converted(tmp_path)
    run = run_script(folder, "train.py")
    assert loss_problems(run, eager) + xla_problems(run) == [], run.output
    assert len(run.compiles) == STEPS and run.compiles[-1] == run.compiles[WARMUP - 1], run.compiles  # no new graph


def test_the_old_port_leaves_the_model_on_two_devices(tmp_path: Path) -> None:
    """The negative control: the loaded tensors moved to XLA, the rest of the model on the CPU."""
    folder, converted = _converted(tmp_path)
    (folder / "train.py").write_text(converted.replace(*OLD_PORT))
    run = run_script(folder, "train.py", check=False)
    assert run.returncode != 0 and not run.losses, run.output
