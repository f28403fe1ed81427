"""XLA505 cuda-seed."""

from __future__ import annotations

from codemods.engine.hooks import reports_references
from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_SEED = Rule(
    code="XLA505",
    name="cuda-seed",
    severity="warning",
    summary="CUDA RNG seeding does not seed the XLA device: use xm.set_rng_state(seed)",
    fixable=False,
    why="CUDA seeding calls leave the XLA device's generator alone, so dropout and random initialisation on the "
    "device ignore the seed; `xm.set_rng_state(seed)` seeds it.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.manual_seed(args.seed)
            torch.cuda.manual_seed_all(args.seed)
            """,
            findings=(Expected(4, 1, "`torch.cuda.manual_seed_all` seeds only CUDA generators; seed the XLA device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            torch.manual_seed(args.seed)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            torch.cuda.manual_seed_all(args.seed)
            """,
            findings=(Expected(3, 1, "`torch.cuda.manual_seed_all` seeds only CUDA generators; seed the XLA device"),),
        ),
        invalid(
            """
            import torch.cuda as tc

            tc.manual_seed(1)
            """,
            alias=True,
            findings=(Expected(3, 1, "`tc.manual_seed` seeds only CUDA generators; seed the XLA device with"),),
        ),
    ),
)

# What it finds: every reference to these APIs, whatever the import alias; and what it says.
reports_references(
    CUDA_SEED,
    "torch.cuda.manual_seed torch.cuda.manual_seed_all torch.cuda.seed torch.cuda.seed_all",
    "seeds only CUDA generators; seed the XLA device with xm.set_rng_state(seed)",
)
