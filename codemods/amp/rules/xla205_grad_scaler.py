"""XLA205 grad-scaler."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

GRAD_SCALER = Rule(
    code="XLA205",
    name="grad-scaler",
    severity="error",
    summary="The CUDA gradient scaler becomes the target's (`torch.amp.GradScaler('xla')`; sagemaker: `torch_xla.amp.GradScaler()`)",
    fixable=True,
    why="torch.cuda.amp.GradScaler disables itself without CUDA (with a warning only): float16 training then "
    "runs without loss scaling and silently underflows.",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'scaler = torch.amp.GradScaler("xla", enabled=use_amp)\n',
            findings=(Expected(3, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", enabled=use_amp)'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler(init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("cuda")
            third = torch.amp.GradScaler(device="cuda", growth_interval=100)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla", init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("xla")
            third = torch.amp.GradScaler("xla", growth_interval=100)
            """,
            findings=(
                Expected(4, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", init_scale=2.**10,'),
                Expected(5, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla")'),
                Expected(6, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla", growth_interval=100)'),
            ),
        ),
        invalid(
            """
            import torch

            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler(enabled=use_amp)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(4, 10, "torch.amp.GradScaler -> torch_xla.amp.GradScaler(enabled=use_amp)"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import GradScaler as GS

            scaler = GS()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla")
            """,
            alias=True,
            findings=(Expected(4, 10, 'GS -> torch.amp.GradScaler("xla")'),),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler(init_scale=2.0**10)
            """,
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = ShardedGradScaler("xla", init_scale=2.0**10)
            """,
            note="sharded",
            findings=(
                Expected(
                    5, 10, 'ShardedGradScaler(init_scale=2.0**10) -> ShardedGradScaler("xla", init_scale=2.0**10)'
                ),
            ),
        ),
        invalid(
            """
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
            """,
            target="sagemaker",
            note="sharded-sagemaker",
            findings=(Expected(3, 10, "`ShardedGradScaler` shards with torch's FSDP"),),
        ),
    ),
)
