"""XLA107 cuda-tensor-type."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_TENSOR_TYPE = Rule(
    code="XLA107",
    name="cuda-tensor-type",
    severity="error",
    summary="Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device",
    fixable=True,
    why="Legacy typed constructors such as `torch.cuda.FloatTensor(...)` create CUDA tensors and raise without "
    "CUDA; the tensor is created on the CPU and moved to the XLA device.",
    examples=lambda: (
        invalid(
            """
            import torch

            noise = torch.cuda.FloatTensor(batch_size, 100).normal_()
            """,
            """
            import torch
            import torch_xla

            noise = torch.FloatTensor(batch_size, 100).to(torch_xla.device()).normal_()
            """,
            findings=(Expected(4, 9, "torch.cuda.FloatTensor(batch_size, 100) -> torch.FloatTensor(batch_size,"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            idx = torch.LongTensor(4).zero_()
            """,
        ),
        valid(
            """
            import torch

            if torch.cuda.HalfTensor in buckets:
                half = tp == torch.cuda.FloatTensor or tp in (torch.cuda.DoubleTensor, torch.cuda.HalfTensor)
            """,
            note="a membership or equality test names the type and creates no tensor",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            idx = torch.cuda.LongTensor(4).zero_()
            """,
            """
            import torch
            import torch_xla

            idx = torch.LongTensor(4).to(torch_xla.device()).zero_()
            """,
            findings=(Expected(4, 7, "torch.cuda.LongTensor(4) -> torch.LongTensor(4).to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch as th

            w = th.cuda.FloatTensor(2, 2)
            """,
            """
            import torch as th
            import torch_xla

            w = th.FloatTensor(2, 2).to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(4, 5, "th.cuda.FloatTensor(2, 2) -> th.FloatTensor(2, 2).to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch

            torch.set_default_tensor_type(torch.cuda.FloatTensor)
            half = x.type(torch.cuda.HalfTensor)
            """,
            note="the type passed as a value makes new tensors CUDA tensors",
            findings=(
                Expected(3, 31, "`torch.cuda.FloatTensor` used as a value creates CUDA tensors"),
                Expected(4, 15, "`torch.cuda.HalfTensor` used as a value creates CUDA tensors"),
            ),
        ),
    ),
)
