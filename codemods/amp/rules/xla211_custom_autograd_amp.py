"""XLA211 custom-autograd-amp."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

CUSTOM_AUTOGRAD_AMP = Rule(
    code="XLA211",
    name="custom-autograd-amp",
    severity="error",
    summary="`torch.cuda.amp.custom_fwd/custom_bwd` become the XLA ones",
    fixable=True,
    why="The CUDA decorators look at CUDA's autocast state, so under XLA autocast a custom function gets "
    "inputs of the wrong precision.",
    examples=lambda: (
        Invalid(
            "import torch\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            '@torch.amp.custom_fwd(device_type="xla")\ndef forward(ctx, x):\n    return x\n',
            findings=(Expected(3, 2, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla")'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            @torch.amp.custom_fwd(device_type="xla")
            def forward(ctx, x):
                return x
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            class F(torch.autograd.Function):
                @staticmethod
                @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.cuda.amp.custom_bwd
                def backward(ctx, g):
                    return g
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            class F(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="xla")
                def backward(ctx, g):
                    return g
            """,
            findings=(
                Expected(6, 6, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla",'),
                Expected(11, 6, 'torch.cuda.amp.custom_bwd -> torch.amp.custom_bwd(device_type="xla")'),
            ),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import custom_fwd as cf

            @cf
            def forward(ctx, x):
                return x
            """,
            """
            import torch
            import torch_xla.amp

            @torch_xla.amp.custom_fwd
            def forward(ctx, x):
                return x
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(4, 2, "cf -> torch_xla.amp.custom_fwd"),),
        ),
    ),
)
