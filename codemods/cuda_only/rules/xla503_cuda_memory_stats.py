"""XLA503 cuda-memory-stats."""

from __future__ import annotations

from codemods.engine.hooks import reports_references
from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_MEMORY_STATS = Rule(
    code="XLA503",
    name="cuda-memory-stats",
    severity="info",
    summary="CUDA memory statistics read 0 on XLA: use xm.get_memory_info(device)",
    fixable=False,
    why="CUDA memory counters read 0 on an XLA machine, so what they log means nothing there; "
    "`xm.get_memory_info(device)` reports the XLA device's memory.",
    examples=lambda: (
        invalid(
            """
            import torch

            print(f"memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
            """,
            findings=(Expected(3, 18, "`torch.cuda.max_memory_allocated` reads 0 on an XLA device; use"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            print(xm.get_memory_info(device))
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            print(torch.cuda.memory_allocated() / 2**20)
            """,
            findings=(Expected(3, 7, "`torch.cuda.memory_allocated` reads 0 on an XLA device; use"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import max_memory_allocated as peak

            print(peak())
            """,
            alias=True,
            findings=(
                Expected(4, 7, "`peak` reads 0 on an XLA device; use xm.get_memory_info(device) for XLA memory"),
            ),
        ),
    ),
)

# What it finds: every reference to these APIs, whatever the import alias; and what it says.
reports_references(
    CUDA_MEMORY_STATS,
    "torch.cuda.memory_allocated torch.cuda.max_memory_allocated torch.cuda.memory_reserved "
    "torch.cuda.max_memory_reserved torch.cuda.memory_cached torch.cuda.max_memory_cached torch.cuda.memory_stats",
    "reads 0 on an XLA device; use xm.get_memory_info(device) for XLA memory",
)
