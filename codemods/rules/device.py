"""XLA1: the device."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA101", "cuda-device", "error", "CUDA device (torch.device('cuda'), 'cuda:N' strings) becomes the XLA device", True),
    Rule("XLA102", "dot-cuda", "error", "`.cuda()` becomes `.to(<XLA device>)`", True),
    Rule("XLA103", "integer-device", "error", "An integer CUDA device index used as a device becomes the XLA device", True),
    Rule("XLA104", "cuda-available-device", "error", "`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there", True),
    Rule("XLA105", "cuda-check", "warning", "A CUDA check that stays (`is_cuda`, `device == 'cuda'`, `torch.cuda.is_available()`) is False on XLA", False),
    Rule("XLA106", "set-device", "error", "`torch.cuda.set_device()` is removed: one XLA device per process", True),
    Rule("XLA107", "cuda-tensor-type", "error", "Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device", True),
)
