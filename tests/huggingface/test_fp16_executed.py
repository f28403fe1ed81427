"""What XLA809 says about the Trainer's fp16 on XLA, run with the venv's transformers 5 and
accelerate 1.x on PJRT_DEVICE=CPU (an XLA device that is not a TPU): `fp16=True` does not
raise there, the Trainer runs the forward under fp16 autocast on the XLA device with a
GradScaler (accelerate raises only when the runtime's device is a TPU); the converted
script (`bf16=True`) runs bfloat16 autocast without a scaler. The negative control is the
original script itself: its precision is fp16, the converted one's is not."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import run_command, run_environment
from tests.support.fixtures import output_text

pytestmark = pytest.mark.executed

SCRIPT = """\
import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments


class Pairs(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return {"x": torch.randn(8, generator=g), "labels": torch.randn(1, generator=g)}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 1)

    def forward(self, x, labels=None):
        out = self.lin(x)
        print("FORWARD", out.dtype, out.device.type)
        return {"loss": torch.nn.functional.mse_loss(out.float(), labels)}


args = TrainingArguments(output_dir="out", fp16=True, optim="adamw_torch_xla", per_device_train_batch_size=4, num_train_epochs=1, report_to=[], save_strategy="no")
trainer = Trainer(model=Net(), args=args, train_dataset=Pairs())
print("SCALER", type(trainer.accelerator.scaler).__name__)
trainer.train()
"""

FORWARD = re.compile(r"^FORWARD (\S+) (\S+)$", re.MULTILINE)
SCALER = re.compile(r"^SCALER (\S+)$", re.MULTILINE)


def _run(source: str, folder: Path) -> tuple[set[tuple[str, str]], str]:
    folder.mkdir()
    (folder / "train.py").write_text(source)
    output = run_command([sys.executable, "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    return set(FORWARD.findall(output)), SCALER.findall(output)[0]


def test_fp16_runs_with_a_scaler_on_a_non_tpu_xla_device_and_the_port_runs_bf16(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    converted = output_text(convert_source(SCRIPT))
    assert "bf16=True" in converted and "fp16" not in converted
    original, scaler = _run(SCRIPT, tmp_path / "original")
    assert original == {("torch.float16", "xla")}
    assert scaler == "GradScaler"
    ported, scaler = _run(converted, tmp_path / "ported")
    assert ported == {("torch.bfloat16", "xla")}
    assert scaler == "NoneType"
