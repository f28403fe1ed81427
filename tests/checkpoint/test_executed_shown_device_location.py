"""Executed: a map location that spells the device as text (``str(self.device)``) once the device
is ported, run converted on XLA (PJRT_DEVICE=CPU), with a negative control that keeps the text."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.checkpoint.rules.shown_device_cases import SHOWN_DEVICE
from codemods.engine.rule import substituted
from tests.support.executed import run_script

pytestmark = pytest.mark.executed

# XLA403's case program, run: the model built on the first GPU loads a checkpoint written by hand.
RESUME = substituted(
    SHOWN_DEVICE.lstrip("\n"),
    ("import torch\n", "import os\nimport torch\n"),
)
RESUME += """

model = Model([0])
if not os.path.isfile("net.pth"):
    torch.save({k: v * 0 + 1 for k, v in torch.nn.Linear(4, 1).state_dict().items()}, "net.pth")
model.load("net.pth")
assert torch.equal(model.net.weight.detach().cpu(), torch.ones(1, 4))
print("loaded on", model.net.weight.device)
"""


def test_the_device_as_text_for_a_map_location_becomes_the_cpu(tmp_path: Path) -> None:
    """``map_location=str(self.device)``, the device ported to XLA, becomes "cpu" (XLA403): the
    state dict loads on the CPU and load_state_dict copies it onto the model on the XLA device.
    Kept as it was, the text is "xla:0", onto which torch.load cannot restore a storage."""
    output = convert_source(RESUME.encode(), target="2.9").output
    assert isinstance(output, bytes)
    script = tmp_path / "resume.py"
    script.write_text(output.decode())
    assert 'map_location="cpu")' in output.decode()
    assert "loaded on xla:0" in run_script(tmp_path, script.name, runner=False).output
    script.write_text(output.decode().replace('map_location="cpu")', "map_location=str(self.device))"))
    failed = run_script(tmp_path, script.name, runner=False, check=False)
    assert failed.returncode != 0 and "don't know how to restore data location" in failed.stderr, failed.stderr[-3000:]
