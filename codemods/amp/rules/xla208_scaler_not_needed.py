"""XLA208 scaler-not-needed."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

SCALER_NOT_NEEDED = Rule(
    code="XLA208",
    name="scaler-not-needed",
    severity="warning",
    summary="With bfloat16 autocast the gradient scaler is not needed (it syncs with the host every step)",
    fixable=False,
    why="Loss scaling exists for float16's narrow range (float16 needs it to train correctly); bfloat16 has "
    "float32's range. On torch_xla 2.9 `torch.amp.GradScaler('xla')` reads found_inf on the host at every "
    "`scaler.step`, with the sync-free optimizers too: measured with `xla-codemod doctor` on the converted "
    "fixtures/amp_recipe.py, one more graph run and one more transfer to the host per step (2 and 2 per step, "
    "against 1 and 1 with `enabled=False`). Reported on the converted script as well (lint), until the scaler is "
    "removed or disabled. Not on the sagemaker target, which keeps the script's float16.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n",
            'import torch\nimport torch_xla\nscaler = torch.amp.GradScaler("xla")\n',
            findings=(Expected(3, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
            """,
            """
            import torch
            import torch_xla

            dtype = 'bfloat16'
            scaler = torch.amp.GradScaler("xla", enabled=(dtype == 'float16'))
            """,
            note="enabled-for-float16-only",
        ),
        valid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler()
            """,
            target="sagemaker",
            note="sagemaker-float16",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla", enabled=amp_dtype == torch.float16)
            off = torch.amp.GradScaler("xla", enabled=False)
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-scaler-enabled-for-float16-only-or-off",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.float16):
                loss = model(x)
            """,
            note="float16-on-xla-needs-its-scaler",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
            findings=(Expected(4, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('cuda')
            """,
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('xla')
            """,
            alias=True,
            findings=(Expected(5, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.amp.syncfree as syncfree

            optimizer = syncfree.AdamW(model.parameters())
            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-script-still-reported",
            findings=(
                Expected(
                    6,
                    10,
                    "with bfloat16 autocast the gradient scaler is not needed, and its step reads found_inf "
                    "on the host every iteration (on torch_xla 2.9, with the sync-free optimizers too: one more "
                    "graph run and a transfer to the host per step)",
                ),
            ),
        ),
    ),
)
