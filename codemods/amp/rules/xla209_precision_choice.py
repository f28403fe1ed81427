"""XLA209 precision-choice."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

PRECISION_CHOICE = Rule(
    code="XLA209",
    name="precision-choice",
    severity="error",
    summary="A precision chosen by CUDA checks (`is_bf16_supported()`) becomes bfloat16 on XLA (2.9 target)",
    fixable=True,
    why="torch.cuda checks are False on an XLA machine, so a script that picks bfloat16 on a modern GPU would "
    "silently fall back to float16 (and switch its gradient scaler on).",
    examples=lambda: (
        Invalid(
            "import torch\ndtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
            "import torch\ndtype = 'bfloat16'\n",
            findings=(Expected(2, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
        valid(
            """
            import torch

            dtype = 'bfloat16' if args.bf16 else 'float16'
            """,
            note="no-cuda-check",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            """
            import torch

            dtype = 'bfloat16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            findings=(Expected(3, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
        invalid(
            """
            from torch.cuda import is_bf16_supported
            import torch as th

            amp_dtype = th.bfloat16 if is_bf16_supported() else th.float16
            """,
            """
            import torch as th

            amp_dtype = th.bfloat16
            """,
            alias=True,
            findings=(Expected(3, 13, "`amp_dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
)
