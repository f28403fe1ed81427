"""Executed: code that already runs right on an XLA host is left as it is (the sixteenth held-out
list's SLM-Lab shapes).  A helper's early return under a check that counts CUDA devices, before code
that only sets CUDA up (``if not use_gpu(spec): return``, then a CUDA index), stays: on XLA the
helper returns there, as it does without CUDA.  A device choice read only as a map location,
``None if torch.cuda.is_available() else "cpu"``, stays: on XLA it loads onto the CPU (even a
checkpoint of XLA tensors, which a map location of None would restore onto the XLA device).  The
negative control undoes both by hand (the return dropped, the choice folded to None, as the port
used to): the code after the return runs and the checkpoint comes back on the XLA device."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.device.rules.helper_return_cases import USE_GPU
from codemods.engine.rule import substituted
from tests.support.executed import converted_project, run_script

pytestmark = pytest.mark.executed

# The helpers of XLA104's case (helper_return_cases.py), a load with a CPU map location, and their calls.
MAIN = (
    substituted(USE_GPU.lstrip("\n"), ("import torch\n", "import torch\nimport torch.nn as nn\n"))
    + """

def load(net, path):
    device = None if torch.cuda.is_available() else "cpu"
    state = torch.load(path, map_location=device)
    net.load_state_dict(state)
    return state


spec = {"gpu": "auto", "trial": 3}
set_cuda_id(spec)
net = nn.Linear(4, 2)
state = load(net, "xla_ckpt.pt")
print(f"cuda_id set {'cuda_id' in spec}")
print(f"loaded on {state['weight'].device.type} equal {torch.equal(net.weight, torch.ones(2, 4))}")
"""
)

# A checkpoint of XLA tensors (torch.save of them restores them on the XLA device).
SAVE = """\
import torch
import torch_xla

device = torch_xla.device()
torch.save({"weight": torch.ones(2, 4, device=device), "bias": torch.zeros(2, device=device)}, "xla_ckpt.pt")
"""

_RETURN = '    if not use_gpu(spec["gpu"]):\n        return\n'
_CHOICE = 'device = None if torch.cuda.is_available() else "cpu"'


def _run(folder: Path, undo: bool) -> tuple[str, str]:
    converted_project(folder, "kept", {"main.py": MAIN})
    script = folder / "main.py"
    converted = script.read_text()
    if undo:
        script.write_text(converted.replace(_RETURN, "").replace(_CHOICE, "device = None"))
    (folder / "save.py").write_text(SAVE)
    run_script(folder, "save.py", runner=False)
    return converted, run_script(folder, "main.py").output


def test_a_helpers_return_and_a_cpu_map_location_stay_and_run_right_on_xla(tmp_path: Path) -> None:
    converted, output = _run(tmp_path / "kept", undo=False)
    assert _RETURN in converted and _CHOICE in converted and "map_location=device" in converted, converted
    assert "cuda_id set False" in output, output
    assert "loaded on cpu equal True" in output, output


def test_undone_by_hand_the_code_after_the_return_runs_and_the_checkpoint_comes_back_on_xla(tmp_path: Path) -> None:
    _, output = _run(tmp_path / "undone", undo=True)
    assert "cuda_id set True" in output, output
    assert "loaded on xla equal True" in output, output
