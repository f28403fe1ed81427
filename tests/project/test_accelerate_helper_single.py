"""A script converted alone that calls a project helper whose training loop runs through Accelerate
(the helper prepares its model and optimizer, calls ``accelerator.backward`` under
``accelerator.autocast()``: DALLE2-pytorch's DecoderTrainer.forward).  A run on the project says
the helper's loop needs nothing (XLA807), so the script's own run must not say it still needs
converting (no XLA003, no XLA112 on ``tr.forward(x)``), even though the helper's module changes
elsewhere (its ``torch.save``).  The near variants still get them: the same helper on CUDA terms
(``loss.backward()``, ``.cuda()``), and the helper looping over a DataLoader of its own that
Accelerate did not prepare (no barrier of Accelerate's ends its steps: XLA301 there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

TRAINER = """\
import torch
from torch import nn
from torch.optim import AdamW


def split_chunks(a, k, max_batch_size):
    yield 1.0, (a, k)


class Trainer(nn.Module):
    def __init__(self, model, accelerator):
        super().__init__()
        self.accelerator = accelerator
        self.model, self.opt = accelerator.prepare(model, AdamW(model.parameters()))

    def forward(self, *a, max_batch_size=None, **k):
        total = 0.0
        for frac, (ca, ck) in split_chunks(a, k, max_batch_size):
            with self.accelerator.autocast():
                loss = self.model(*ca, **ck).mean() * frac
            total += loss.item()
            if self.training:
                self.accelerator.backward(loss)
        return total

    def update(self):
        self.opt.step()
        self.opt.zero_grad()

    def save(self, path):
        torch.save(self.model.state_dict(), path)
"""

SCRIPT = """\
import torch
from accelerate import Accelerator

from lib.trainer import Trainer


def main():
    acc = Accelerator()
    tr = Trainer(torch.nn.Linear(8, 1), acc)
    loader = acc.prepare(torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8))
    for x in loader:
        x = x.to(acc.device)
        loss = tr.forward(x)
        tr.update()


if __name__ == "__main__":
    main()
"""

# The helper on CUDA terms: its own backward and optimizer, the model moved to CUDA.
CUDA_TRAINER = TRAINER.replace(
    "        self.model, self.opt = accelerator.prepare(model, AdamW(model.parameters()))\n",
    "        self.model = model.cuda()\n        self.opt = AdamW(self.model.parameters())\n",
).replace(
    "            with self.accelerator.autocast():\n                loss", "            if True:\n                loss"
)
CUDA_TRAINER = CUDA_TRAINER.replace("self.accelerator.backward(loss)", "loss.backward()")

# The helper's loop over a DataLoader of its own that Accelerate did not prepare.
OWN_LOADER_TRAINER = TRAINER.replace(
    "    def update(self):",
    "    def fit(self, data):\n"
    "        loader = torch.utils.data.DataLoader(data, batch_size=8, drop_last=True)\n"
    "        for x in loader:\n"
    "            self.accelerator.backward(self.model(x.to(self.accelerator.device)).mean())\n"
    "            self.opt.step()\n"
    "            self.opt.zero_grad()\n\n"
    "    def update(self):",
)


def _findings(folder: Path, names: list[str], target: str) -> set[tuple[str, str, int]]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {(f.rule, Path(report.path).name, f.line) for report in reports for f in report.findings}


def _project(tmp_path: Path, trainer: str, script: str = SCRIPT) -> Path:
    return write_project(tmp_path / "p", "p", {"lib/__init__.py": "", "lib/trainer.py": trainer, "train.py": script})


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_that_trains_through_accelerate_needs_no_conversion(tmp_path: Path, target: str) -> None:
    folder = _project(tmp_path, TRAINER)
    single = _findings(folder, ["train.py"], target)
    assert not {rule for rule, _, _ in single} & {"XLA003", "XLA112"}, single
    whole = _findings(folder, ["train.py", "lib/trainer.py"], target)
    assert ("XLA807", "trainer.py", 23) in whole, whole
    assert not {rule for rule, name, _ in whole if name == "train.py"} & {"XLA003", "XLA112", "XLA301"}, whole


@pytest.mark.parametrize("target", TARGETS)
def test_the_same_helper_on_cuda_terms_still_needs_converting(tmp_path: Path, target: str) -> None:
    single = _findings(_project(tmp_path, CUDA_TRAINER), ["train.py"], target)
    assert {("XLA003", "train.py", 13), ("XLA112", "train.py", 13)} <= single, single


@pytest.mark.parametrize("target", TARGETS)
def test_a_helper_loop_over_a_loader_accelerate_did_not_prepare_still_needs_converting(
    tmp_path: Path, target: str
) -> None:
    script = SCRIPT.replace("        tr.update()\n", "        tr.update()\n    tr.fit(torch.randn(64, 8))\n")
    folder = _project(tmp_path, OWN_LOADER_TRAINER, script)
    single = _findings(folder, ["train.py"], target)
    assert ("XLA003", "train.py", 15) in single, single
    assert not {line for rule, _, line in single if rule in ("XLA003", "XLA112")} & {13}, single
    whole = _findings(folder, ["train.py", "lib/trainer.py"], target)
    assert ("XLA301", "trainer.py", 28) in whole, whole
    assert ("XLA201", "trainer.py", 30) not in whole, whole  # the prepared optimizer reduces the gradients
