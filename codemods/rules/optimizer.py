"""XLA2: optimizer steps and mixed precision."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA201", "optimizer-step", "error", "`optimizer.step()` becomes `xm.optimizer_step(optimizer)`", True),
    Rule("XLA202", "amp", "error", "CUDA mixed precision (autocast, GradScaler) is not ported by this version", False),
    Rule("XLA203", "optimizer-before-move", "error", "An optimizer built before its model moves to the XLA device gets the moved parameters", True),
)
