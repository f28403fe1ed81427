"""Executed: a GRU fed a PackedSequence, on torch_xla 2.9 (CPU).  The port adds ``import torch_xla``,
which replaces ``torch.nn.GRU`` with torch_xla's scan GRU; that GRU raises ``AssertionError:
PackedSequence is not supported``, so XLA516's finding on the converted script is true (the original
runs on the CPU).

Negative control: the same script fed the padded batch converts and runs on the XLA device."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.cuda_only.rules.xla516_packed_gru import ENCODER, PACKED_GRU
from codemods.engine.rule import substituted
from tests.support.executed import convert_folder, eager_and_converted_script, run_script

pytestmark = pytest.mark.executed

# XLA516's case program, run: the GRU's last hidden state printed, on the device the script picks.
TRAIN = substituted(
    ENCODER.lstrip("\n"),
    ("self.rnn(packed)[0]", "self.rnn(packed)[1]"),
    (
        "model = Encoder().cuda()\n",
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "torch.manual_seed(0)\n"
        "model = Encoder().to(device)\n"
        "hidden = model(torch.randn(2, 5, 4).to(device), torch.tensor([5, 3]))\n"
        'print(f"hidden {hidden.sum().item()}")\n',
    ),
)
PADDED = TRAIN.replace("self.rnn(packed)", "self.rnn(x)")


def test_the_converted_gru_rejects_the_packed_sequence(tmp_path: Path) -> None:
    eager, ported = tmp_path / "eager", tmp_path / "ported"
    for folder in (eager, ported):
        folder.mkdir()
        (folder / "train.py").write_text(TRAIN)
    assert "hidden " in run_script(eager, "train.py", on_xla=False).output
    convert_folder(ported)
    converted = (ported / "train.py").read_text()
    assert "import torch_xla\n" in converted and "self.rnn(packed)" in converted, converted
    assert [f.line for f in convert_source(TRAIN.encode()).findings if f.rule == PACKED_GRU.code] == [13]
    run = run_script(ported, "train.py", check=False)
    assert run.returncode != 0 and "AssertionError: PackedSequence is not supported" in run.stderr, run.stderr


def test_fed_the_padded_batch_the_converted_gru_runs(tmp_path: Path) -> None:
    converted, run, _ = eager_and_converted_script(tmp_path, "train.py", PADDED)
    assert "import torch_xla\n" in converted and "self.rnn(x)" in converted, converted
    assert PACKED_GRU.code not in {f.rule for f in convert_source(PADDED.encode()).findings}
    assert "hidden " in run.output
