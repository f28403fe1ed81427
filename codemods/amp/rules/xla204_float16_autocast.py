"""XLA204 float16-autocast."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

FLOAT16_AUTOCAST = Rule(
    code="XLA204",
    name="float16-autocast",
    severity="warning",
    summary="float16 autocast on XLA becomes bfloat16 (2.9 target)",
    fixable=True,
    why="XLA devices compute in bfloat16: TPUs do not support float16 autocast, and bfloat16 needs no loss scaling.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.float16):\n    loss = model(x)\n",
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.bfloat16):\n    loss = model(x)\n",
            findings=(Expected(2, 52, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=ptdtype)
            """,
            note="dtype-variable",
        ),
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch
            import torch_xla.amp

            ctx = torch_xla.amp.autocast(dtype=torch.float16)
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            findings=(Expected(3, 53, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
        invalid(
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.half)
            """,
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.bfloat16)
            """,
            alias=True,
            findings=(Expected(3, 54, "autocast dtype th.half -> th.bfloat16"),),
        ),
    ),
)
