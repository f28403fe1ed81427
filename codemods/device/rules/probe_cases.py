"""XLA104's cases of a probe for the CUDA driver's tool (spotlight's ``shutil.which('nvidia-smi') is
not None``): a check for a GPU that an XLA host fails as it fails ``torch.cuda.is_available()``,
ported the same way; a probe for another tool is no such check."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_PROBED = """
import os
import shutil

import torch

use_cuda = os.environ.get("NO_CUDA") is None and shutil.which("nvidia-smi") is not None
model = torch.nn.Linear(4, 1)
if use_cuda:
    model = model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in batches:
    x = x.cuda() if shutil.which("nvidia-smi") else x
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def cuda_tool_probe_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _PROBED,
            """
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm

use_cuda = os.environ.get("NO_CUDA") is None
model = torch.nn.Linear(4, 1)
if use_cuda:
    model = model.to(torch_xla.device())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in batches:
    x = x.to(torch_xla.device())
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    xm.optimizer_step(opt)
    torch_xla.sync()
""",
            note="nvidia-smi-probe-picks-the-device",
            findings=(
                Expected(7, 12, "`use_cuda` picks the device: its accelerator check is dropped"),
                Expected(13, 9, "device picked by an accelerator check, which is False on XLA"),
            ),
        ),
    )


def cuda_tool_probe_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            _PROBED.replace("nvidia-smi", "ffmpeg"),
            """
import os
import shutil

import torch
import torch_xla
import torch_xla.core.xla_model as xm

use_cuda = os.environ.get("NO_CUDA") is None and shutil.which("ffmpeg") is not None
model = torch.nn.Linear(4, 1)
if use_cuda:
    model = model.to(torch_xla.device())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in batches:
    x = x.to(torch_xla.device()) if shutil.which("ffmpeg") else x
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    xm.optimizer_step(opt)
    torch_xla.sync()
""",
            note="probe-for-another-tool-picks-no-device",
        ),
    )
