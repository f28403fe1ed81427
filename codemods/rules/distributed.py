"""XLA6: multi-process and multi-GPU training."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA601", "distributed", "error", "Multi-GPU code (DataParallel, DDP, NCCL, mp.spawn) is not ported by this version", False),
)
