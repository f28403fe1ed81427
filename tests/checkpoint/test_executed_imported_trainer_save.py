"""Executed: a script that names no device saves the state dict of a model another module of the
project trained on the GPU (``from trainer import train_model``; review of list 21, item 2).  The
tool took the file for a conversion script, whose saves hold host tensors, and kept torch.save: the
file held XLA tensors, which ``torch.load`` without torch_xla cannot restore.  Now what an imported
function returns is not built in the file: the save is xm.save, and a process without torch_xla
loads the checkpoint.  The negative control puts torch.save back: that load fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

TRAINER = """\
import torch


def train_model(steps=4):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(steps):
        loss = net(torch.randn(8, 4).to(device)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net
"""

TRAIN = """\
import torch
from trainer import train_model

net = train_model()
torch.save(net.state_dict(), "out.pt")
print("saved")
"""

LOAD = """\
import torch

state = torch.load("out.pt")
print("loaded", state["weight"].device, tuple(state["weight"].shape))
"""

SAVE = 'xm.save(net.state_dict(), "out.pt")'


def test_a_save_of_what_an_imported_function_trained_loads_without_torch_xla(tmp_path: Path) -> None:
    folder = converted_project(tmp_path / "xla", "imported_trainer", {"train.py": TRAIN, "trainer.py": TRAINER})
    script = folder / "train.py"
    converted = script.read_text()
    assert SAVE in converted, converted
    (folder / "load.py").write_text(LOAD)
    run_script(folder, "train.py")
    loaded = run_script(folder, "load.py", on_xla=False, runner=False)
    assert "loaded cpu (1, 4)" in loaded.output, loaded.output
    # The negative control: the save kept as torch.save writes XLA tensors.
    script.write_text(converted.replace(SAVE, 'torch.save(net.state_dict(), "out.pt")'))
    run_script(folder, "train.py")
    failed = run_script(folder, "load.py", on_xla=False, runner=False, check=False)
    assert failed.returncode != 0 and "NotImplementedError" in failed.stderr, failed.stderr[-2000:]
