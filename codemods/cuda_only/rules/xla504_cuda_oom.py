"""XLA504 cuda-oom."""

from __future__ import annotations

from codemods.engine.hooks import reports_references
from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_OOM = Rule(
    code="XLA504",
    name="cuda-oom",
    severity="warning",
    summary="`torch.cuda.OutOfMemoryError` is never raised on XLA",
    fixable=False,
    why="XLA reports running out of device memory as a RuntimeError (RESOURCE_EXHAUSTED), never as "
    "`torch.cuda.OutOfMemoryError`: the handler never runs, and the script stops where it used to recover.",
    examples=lambda: (
        invalid(
            """
            import torch

            try:
                loss = train_step(batch)
            except torch.cuda.OutOfMemoryError:
                skipped += 1
            """,
            findings=(Expected(5, 8, "`torch.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            try:
                step()
            except RuntimeError:
                shrink_batch()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            try:
                step()
            except torch.cuda.OutOfMemoryError:
                shrink_batch()
            """,
            findings=(Expected(5, 8, "`torch.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
        invalid(
            """
            import torch as th

            try:
                step()
            except th.cuda.OutOfMemoryError:
                pass
            """,
            alias=True,
            findings=(Expected(5, 8, "`th.cuda.OutOfMemoryError` is never raised on XLA"),),
        ),
    ),
)

# What it finds: every reference to these APIs, whatever the import alias; and what it says.
reports_references(
    CUDA_OOM,
    "torch.cuda.OutOfMemoryError",
    "is never raised on XLA: running out of device memory raises RuntimeError (RESOURCE_EXHAUSTED); catch that instead",
)
