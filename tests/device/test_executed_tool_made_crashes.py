"""Executed: code the port used to break itself, run converted on XLA (PJRT_DEVICE=CPU), each
with a negative control that runs what the port wrote before and sees it fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import RUN_TIMEOUT, run_command, run_environment

pytestmark = pytest.mark.executed


def _converted(source: str, target: str = "2.9") -> str:
    output = convert_source(source.encode(), target=target).output
    assert isinstance(output, bytes)
    return output.decode()


def _fails(script: Path, error: str) -> None:
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=script.parent,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0 and error in result.stderr, result.stderr[-3000:]


RESUME = """\
import os
import torch
import torch.nn as nn

model = nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
if not os.path.isfile("ckpt.pth"):
    torch.save({"state_dict": model.state_dict(), "optimizer": opt.state_dict()}, "ckpt.pth")
saved = torch.load("ckpt.pth", map_location="cpu")["state_dict"]["weight"]
checkpoint = torch.load("ckpt.pth", map_location=lambda storage, loc: storage.cuda())
model.load_state_dict(checkpoint["state_dict"])
opt.load_state_dict(checkpoint["optimizer"])
assert torch.equal(model.weight.detach().cpu(), saved)
for step in range(3):
    loss = model(torch.randn(8, 4).cuda()).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
print("resumed on", model.weight.device)
"""


def test_a_map_location_that_moves_each_storage_to_cuda_loads_on_the_cpu(tmp_path: Path) -> None:
    """``lambda storage, loc: storage.cuda()`` becomes "cpu" (XLA403): the checkpoint loads, and
    load_state_dict copies it onto the model on the XLA device.  The lambda the port used to write
    (``storage.to(<xla device>)``) raises: a storage's ``to`` takes its device by keyword only."""
    output = _converted(RESUME)
    assert 'map_location="cpu")\n' in output and "storage" not in output
    script = tmp_path / "resume.py"
    script.write_text(output)
    run_command([sys.executable, str(script)], tmp_path, run_environment(PJRT_DEVICE="CPU"))
    assert "resumed on xla:0" in run_command(
        [sys.executable, str(script)], tmp_path, run_environment(PJRT_DEVICE="CPU")
    )
    script.write_text(
        output.replace('map_location="cpu")\n', "map_location=lambda storage, loc: storage.to(torch_xla.device()))\n")
    )
    _fails(script, "TypeError")
