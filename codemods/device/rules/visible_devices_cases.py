"""XLA119's cases of a move under a flag read from ``CUDA_VISIBLE_DEVICES`` (ProDiff's
utils/trainer.py: ``self.on_gpu = self.num_gpus > 0`` from the variable's ids, then ``if
self.on_gpu: task.cuda(...)``): device/unseen_flags.py.  A parameter's flag that another file sets
beside a CUDA check (Multimodal-Transformer's src/train.py) needs the project:
tests/project/test_handed_namespace_flags.py."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_IDS = """
import os

import torch
from torch import nn

ids = [int(x) for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if x]
on_gpu = len(ids) > 0
model = nn.Linear(4, 2)
if on_gpu:
    model.cuda()
"""

# Through ``from os import environ as env, getenv``, on ``self``, a conditional expression and a subscript.
_ALIASED = """
from os import environ as env, getenv

import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.gpus = env["CUDA_VISIBLE_DEVICES"].split(",")
        self.single = getenv("CUDA_VISIBLE_DEVICES") is not None

    def fit(self, model, x):
        model = model.cuda() if self.gpus else model
        if self.single:
            x = x.cuda()
        return model(x)
"""

# The variable only logged, and a count of it that guards no move: it chooses nothing.
_LOGGED = """
import logging
import os

import torch
from torch import nn

visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
logging.info("GPUs: %s", visible)
workers = len(visible.split(","))
model = nn.Linear(4, 2)
if workers > 0:
    print("workers", workers)
model.cuda()
"""

# True with the variable unset: a default that is not the "no GPU" value, and a test that lets
# an unset variable through (``is None or ...``); the move runs on XLA and is ported.
_TRUE_WHEN_UNSET = """
import os

import torch
from torch import nn

gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
use_gpu = gpus != "-1"
visible = os.getenv("CUDA_VISIBLE_DEVICES")
model = nn.Linear(4, 2)
if use_gpu:
    model = model.cuda()
if visible is None or torch.cuda.device_count() > 1:
    model = model.cuda()
"""

_MESSAGE = "`on_gpu` is decided by `CUDA_VISIBLE_DEVICES` (through `ids`), and `model.cuda()` moves to the device"


def visible_devices_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _IDS,
            substituted(
                _IDS,
                ("from torch import nn\n", "from torch import nn\nimport torch_xla\n"),
                ("model.cuda()", "model.to(torch_xla.device())"),
            ),
            note="a-move-under-a-flag-read-from-cuda-visible-devices",
            findings=(
                Expected(
                    10,
                    4,
                    _MESSAGE + " only under it: on an XLA host (a TPU VM) `CUDA_VISIBLE_DEVICES` "
                    "is normally unset, so the test may be False",
                ),
            ),
        ),
        invalid(
            _ALIASED,
            substituted(
                _ALIASED,
                ("from torch import nn\n", "from torch import nn\nimport torch_xla.core.xla_model as xm\n"),
                ("model.cuda()", "model.to(xm.xla_device())"),
                ("x.cuda()", "x.to(xm.xla_device())"),
            ),
            target="sagemaker",
            alias=True,
            note="cuda-visible-devices-read-through-aliases-sagemaker",
            findings=(
                Expected(14, 46, "`self.gpus` is decided by `CUDA_VISIBLE_DEVICES`, and `model.cuda()` moves"),
                Expected(15, 12, "is normally unset, so the test is False, on XLA that move never runs"),
            ),
        ),
    )


def visible_devices_valid() -> tuple[Valid, ...]:
    return (
        valid(
            _LOGGED,
            substituted(
                _LOGGED,
                ("from torch import nn\n", "from torch import nn\nimport torch_xla\n"),
                ("model.cuda()", "model.to(torch_xla.device())"),
            ),
            note="cuda-visible-devices-only-logged",
        ),
        *(
            valid(
                _TRUE_WHEN_UNSET,
                substituted(
                    _TRUE_WHEN_UNSET,
                    ("from torch import nn\n", f"from torch import nn\n{imports}\n"),
                    ("model = model.cuda()\nif", f"model = model.to({device})\nif"),
                    ("model = model.cuda()\n", f"model = model.to({device})\n"),
                ),
                target=target,
                note=f"cuda-visible-devices-test-true-when-unset{suffix}",
            )
            for target, imports, device, suffix in (
                ("2.9", "import torch_xla", "torch_xla.device()", ""),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()", "-sagemaker"),
            )
        ),
    )
