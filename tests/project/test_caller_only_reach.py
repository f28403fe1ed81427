"""What a single-file run says of the project modules it does not convert (XLA003) leaves out code in
methods that run only where a caller names them and that nothing on the script's path names: a
LightningModule's own method that is no Lightning hook (minDALL-E's ``ImageGPT.sample``, whose
default ``device='cuda:0'`` the training script never reaches), and a call made only inside such a
method (``self.decoder.generate(...)`` in ``sample``: ``Decoder.generate``'s CUDA autocast is off the
path too).  Code in a Lightning hook (``training_step``), or a method the script calls, stays reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import script_findings

TARGETS = ["2.9", "sagemaker"]

DECODER = """\
import torch


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)

    def generate(self, x, use_fp16=True):
        with torch.cuda.amp.autocast(enabled=use_fp16):
            return self.proj(x)
"""

MODEL = """\
import pytorch_lightning as pl
import torch

from decoder import Decoder


class ImageModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def training_step(self, batch, batch_idx):
        return self.decoder(batch).sum()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

    def sample(self, n, device="cuda:0"):
        x = torch.randn(n, 4).to(device)
        return self.decoder.generate(x)
"""

TRAIN = """\
import pytorch_lightning as pl
import torch

from model import ImageModel

model = ImageModel()
trainer = pl.Trainer(max_epochs=1)
trainer.fit(model, torch.utils.data.DataLoader(torch.randn(8, 4), batch_size=4))
"""


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _found(tmp_path: Path, target: str, model: str = MODEL, train: str = TRAIN) -> list[tuple[int, str]]:
    return script_findings(tmp_path, {"decoder.py": DECODER, "model.py": model, "train.py": train}, target, "XLA003")


@pytest.mark.parametrize("target", TARGETS)
def test_a_lightning_modules_own_method_and_what_only_it_calls_are_off_the_path(tmp_path: Path, target: str) -> None:
    assert _found(tmp_path, target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_script_that_calls_the_method_reaches_both(tmp_path: Path, target: str) -> None:
    found = _found(tmp_path, target, train=TRAIN + "images = model.sample(4)\n")
    assert [line for line, _ in found] == [4, 9], found
    assert "`Decoder` in decoder.py has `torch.cuda.amp.autocast(enabled=use_fp16)`" in found[0][1], found
    assert '`ImageModel.sample` has `"cuda:0"`' in found[1][1], found


@pytest.mark.parametrize("target", TARGETS)
def test_the_same_code_in_a_lightning_hook_stays_reported(tmp_path: Path, target: str) -> None:
    model = MODEL.replace(
        "        return self.decoder(batch).sum()", "        return self.decoder.generate(batch).sum()"
    )
    found = _found(tmp_path, target, model=model)
    assert [line for line, _ in found] == [4], found
    assert "`Decoder` in decoder.py has `torch.cuda.amp.autocast(enabled=use_fp16)`" in found[0][1], found
    assert "cuda:0" not in found[0][1], found
