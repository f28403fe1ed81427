"""Files of another deep-learning framework in a torch project (RT-DETR's PaddlePaddle port beside
its PyTorch one): a file without torch that imports paddle (tensorflow, jax, ...) and calls
``loss.backward()``/``optimizer.step()`` steps that framework's optimizer, so it is no torch training
code: neither parsed nor rewritten (no ``import torch_xla``, no ``xm.optimizer_step`` on a Paddle
optimizer), neither is a file that only imports one; the same file without that import (its model and
optimizer from another module: SPADE's trainer) still gets its barrier."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.project.text_scans import imports_another_framework
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

PADDLE_TRAINER = """\
import paddle

model = paddle.nn.Linear(3, 3)
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
for x in paddle.io.DataLoader(paddle.randn([8, 3]), batch_size=2):
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.clear_grad()
"""
# A file of the Paddle port that imports the trainer and drives a step of its own.
PADDLE_USER = """\
import paddle.nn as nn
from trainer import model


def run(opt, batches):
    for x in batches:
        model(x).sum().backward()
        opt.step()
"""
# A test of the Paddle port's op, in a package whose path says ``transformers``.
PADDLE_OP_TEST = """\
import paddle
from ppdet.modeling.transformers.utils import attention

for x in range(3):
    attention(x).sum().backward()
"""
# The same loop without a framework import: its model and optimizer come from another module.
PLAIN = """\
from helpers import model, opt

for x in range(3):
    model(x).sum().backward()
    opt.step()
"""


def _run(folder: Path, files: dict[str, str], target: str) -> dict[str, tuple[bool, list[tuple[str, int]]]]:
    write_project(folder, "proj", files)
    job = Job("diff", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    return {Path(r.path).name: (r.changed, [(f.rule, f.line) for f in r.findings]) for r in reports}


@pytest.mark.parametrize("target", TARGETS)
def test_paddle_training_files_are_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"trainer.py": PADDLE_TRAINER, "cam.py": PADDLE_USER, "op_test.py": PADDLE_OP_TEST}
    found = _run(tmp_path, files, target)
    assert found == {"trainer.py": (False, []), "cam.py": (False, []), "op_test.py": (False, [])}


@pytest.mark.parametrize("target", TARGETS)
def test_the_same_loop_without_a_framework_import_gets_its_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    changed, findings = _run(tmp_path, {"plain.py": PLAIN}, target)["plain.py"]
    assert changed and ("XLA301", 3) in findings and ("XLA201", 5) in findings


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"import paddle\n", True),
        (b"import os, tensorflow as tf\n", True),
        (b"from jax import numpy as jnp\n", True),
        (b"    import mindspore.nn as nn\n", True),
        (b"import paddlex_helpers\n", False),
        (b"from models import paddle\n", False),
        (b"import torch\n# like paddle\n", False),
    ],
)
def test_imports_of_other_frameworks(source: bytes, expected: bool) -> None:
    assert imports_another_framework(source) is expected
