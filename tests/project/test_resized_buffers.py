"""A preallocated input buffer that the port puts on the XLA device, filled with each batch by a
helper of another module that resizes it in place (``v.data.resize_(data.size()).copy_(data)``):
XLA514 at the call in a run over the project, both targets; a buffer left on the CPU is not
reported.  Executed on torch_xla 2.9 (CPU): the converted script raises at the resize (a batch
larger than the buffer: functionalization refuses it), and with the fix the finding names
(``image = cpu_images.to(device)``) it trains like the same fix run eagerly, one graph per step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import converted_project, eager_and_converted_runs, loss_problems, run_script, xla_problems
from tests.support.projects import unfixed_findings, write_project

UTILS = """\
import torch


def to_tensor(values):
    return torch.as_tensor(values)


def load_data(v, data):
    v.data.resize_(data.size()).copy_(data)
"""

TRAIN = """\
import torch
import torch.nn as nn

import utils

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
image = torch.FloatTensor(2, 8)
image = image.to(device)


def train_batch(cpu_images):
    utils.load_data(image, cpu_images)
    loss = model(image).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


data = [torch.randn(4, 8) for _ in range(3)]
for step, x in enumerate(data):
    loss = train_batch(x)
    print(f"step {step} loss {loss.item()}")
"""
FILLED = "    utils.load_data(image, cpu_images)\n"
REBOUND = "    global image\n    image = cpu_images.to(device)\n"


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_buffer_on_the_device_resized_by_a_helper_is_an_error_at_the_call(tmp_path: Path, target: str) -> None:
    repo = write_project(tmp_path / "on", "buffers", {"utils.py": UTILS, "train.py": TRAIN})
    found = unfixed_findings(repo, ["train.py", "utils.py"], target)
    assert [(line, message.split(",")[0]) for rule, line, message in found["train.py"] if rule == "XLA514"] == [
        (15, "`utils.load_data(...)` resizes `image` in place (`load_data` resizes its parameter)")
    ]
    assert found["utils.py"] == []
    on_the_cpu = TRAIN.replace("image = image.to(device)\n", "")
    repo = write_project(tmp_path / "off", "buffers", {"utils.py": UTILS, "train.py": on_the_cpu})
    assert [rule for rule, _, _ in unfixed_findings(repo, ["train.py"], target)["train.py"] if rule == "XLA514"] == []


@pytest.mark.executed
def test_the_resize_raises_on_xla_and_the_rebinding_trains(tmp_path: Path) -> None:
    """The negative control is the script as converted: it raises at the resize.  The fix is
    compared with the same fix run eagerly: the original itself, on current PyTorch, trains on
    the buffer's old shape (``v.data.resize_`` leaves ``v`` its shape: the first rows only)."""
    files = {"utils.py": UTILS, "train.py": TRAIN}
    failed = run_script(converted_project(tmp_path / "as-converted", "buffers", files), "train.py", check=False)
    assert failed.returncode != 0
    assert "Attempted to resize a view tensor to a larger size" in failed.stderr, failed.stderr[-2000:]
    original = run_script(write_project(tmp_path / "original", "buffers", files), "train.py", on_xla=False)
    fixed = {**files, "train.py": TRAIN.replace(FILLED, REBOUND)}
    eager, run = eager_and_converted_runs(tmp_path, "buffers", fixed, "    image = cpu_images.to(device)\n")
    assert len(eager.losses) == 3
    assert loss_problems(run, eager) + xla_problems(run) == []
    assert run.executions == 3, run.output
    assert original.losses[1:] != pytest.approx(eager.losses[1:], rel=1e-3)  # the first rows only
