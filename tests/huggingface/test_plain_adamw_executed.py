"""What XLA801 says about `optim="adamw_torch"`, run with the venv's transformers 5 on
PJRT_DEVICE=CPU: the Trainer builds torch.optim.AdamW without `fused=True` for it, which
steps XLA parameters, so the port leaves the script as it is and it trains on XLA, with the
losses of the original's eager run.
The negative control is the Trainer's default with torch >= 2.8, `"adamw_torch_fused"`, which
raises on XLA parameters: the port maps it (XLA801)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from codemods import convert_source
from tests.support.executed import RUN_TIMEOUT, run_command, run_environment
from tests.support.fixtures import output_text

pytestmark = pytest.mark.executed

SCRIPT = """\
import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments


class Pairs(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return {"x": torch.randn(8, generator=g), "labels": torch.randn(1, generator=g)}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 1)

    def forward(self, x, labels=None):
        return {"loss": torch.nn.functional.mse_loss(self.lin(x), labels)}


class Losses(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            print(f"step {state.global_step} loss {logs['loss']}")


torch.manual_seed(0)
args = TrainingArguments(output_dir="out", optim="OPTIM_NAME", per_device_train_batch_size=4, max_steps=4, logging_steps=1, report_to=[], save_strategy="no", dataloader_num_workers=2)
trainer = Trainer(model=Net(), args=args, train_dataset=Pairs(), callbacks=[Losses()])
print("OPTIMIZER", type(trainer.create_optimizer()).__name__, trainer.args.device.type)
trainer.train()
"""

LOSS = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)


def _losses(output: str) -> list[float]:
    return [float(v) for _, v in LOSS.findall(output)]


def _run(source: str, folder: Path, xla: bool) -> str:
    folder.mkdir()
    (folder / "train.py").write_text(source)
    # The original in eager mode: transformers and accelerate leave torch_xla alone.
    env = run_environment(PJRT_DEVICE="CPU") if xla else run_environment(USE_TORCH_XLA="0")
    return run_command([sys.executable, "train.py"], folder, env)


def test_plain_adamw_stays_and_trains_on_xla_like_the_eager_original(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    script = SCRIPT.replace("OPTIM_NAME", "adamw_torch")
    assert output_text(convert_source(script)) == script
    eager = _run(script, tmp_path / "eager", xla=False)
    ported = _run(script, tmp_path / "ported", xla=True)
    assert "OPTIMIZER AdamW cpu" in eager, eager[-2000:]
    assert "OPTIMIZER AdamW xla" in ported, ported[-2000:]
    assert len(_losses(eager)) == 4
    assert _losses(ported) == pytest.approx(_losses(eager), rel=1e-3, abs=1e-5)


def test_the_fused_default_raises_on_xla_and_the_port_maps_it(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    script = SCRIPT.replace("OPTIM_NAME", "adamw_torch_fused")
    folder = tmp_path / "fused"
    folder.mkdir()
    (folder / "train.py").write_text(script)
    result = subprocess.run(
        [sys.executable, "train.py"],
        cwd=folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode != 0
    assert "fused=True" in result.stderr
    assert 'optim="adamw_torch_xla"' in output_text(convert_source(script))
