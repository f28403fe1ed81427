"""XLA102 dot-cuda."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

DOT_CUDA = Rule(
    code="XLA102",
    name="dot-cuda",
    severity="error",
    summary="`.cuda()` becomes `.to(<XLA device>)`",
    fixable=True,
    why="`.cuda()` moves a module or a tensor to a CUDA device and raises without one; `.to()` with the XLA "
    "device moves it there, keeping the other arguments.",
    examples=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            inputs = batch.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            inputs = batch.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 10, "batch.cuda(non_blocking=True) -> batch.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            use_gpu = torch.cuda.is_available()
            x = x.to("cpu")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = Net().cuda()
            x = x.cuda(non_blocking=True)
            """,
            """
            import torch
            import torch_xla

            model = Net().to(torch_xla.device())
            x = x.to(torch_xla.device(), non_blocking=True)
            """,
            findings=(
                Expected(4, 9, "Net().cuda() -> Net().to(torch_xla.device())"),
                Expected(5, 5, "x.cuda(non_blocking=True) -> x.to(torch_xla.device(), non_blocking=True)"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla as tx

            model.cuda()
            """,
            """
            import torch
            import torch_xla as tx

            model.to(tx.device())
            """,
            note="existing-torch_xla-alias",
            alias=True,
            findings=(Expected(4, 1, "model.cuda() -> model.to(tx.device())"),),
        ),
    ),
)
