"""XLA5: CUDA runtime calls."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA501", "cuda-synchronize", "error", "`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`", True),
    Rule("XLA502", "cuda-no-effect", "info", "CUDA-only setting with no effect on XLA (empty_cache, cudnn flags, pin_memory) is removed", True),
    Rule("XLA503", "cuda-memory-stats", "info", "CUDA memory statistics read 0 on XLA: use xm.get_memory_info(device)", False),
    Rule("XLA504", "cuda-oom", "warning", "`torch.cuda.OutOfMemoryError` is never raised on XLA", False),
    Rule("XLA505", "cuda-seed", "warning", "CUDA RNG seeding does not seed the XLA device: use xm.set_rng_state(seed)", False),
    Rule("XLA506", "cuda-api", "error", "CUDA-only API with no XLA equivalent", False),
)
