"""XLA506's cases for a CUDA API in the device argument of a `.cuda()` (which XLA102 rewrites, the
argument with it), kept apart from the rule so that its module holds the rule, its messages and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def dot_cuda_argument_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch


            def move(edge_idx, gpu):
                if len(gpu) >= 2:
                    edge_idx = edge_idx.cuda(torch.cuda.current_device())
                return edge_idx
            """,
            """
            import torch
            import torch_xla


            def move(edge_idx, gpu):
                if len(gpu) >= 2:
                    edge_idx = edge_idx.to(torch_xla.device())
                return edge_idx
            """,
            note="the device argument of a .cuda() that XLA102 rewrites goes with it",
        ),
        valid(
            """
            import torch as th


            def move(edge_idx):
                return edge_idx.cuda(device=th.cuda.current_device())
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm


            def move(edge_idx):
                return edge_idx.to(xm.xla_device())
            """,
            target="sagemaker",
            note="the device keyword of a .cuda() that XLA102 rewrites, through an alias (sagemaker)",
        ),
    )


def dot_cuda_argument_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch


            def move(edge_idx, gpu):
                if len(gpu) >= 2:
                    edge_idx = edge_idx.cuda(torch.cuda.current_device())
                return edge_idx, torch.cuda.current_device()
            """,
            """
            import torch
            import torch_xla


            def move(edge_idx, gpu):
                if len(gpu) >= 2:
                    edge_idx = edge_idx.to(torch_xla.device())
                return edge_idx, torch.cuda.current_device()
            """,
            note="a .cuda() argument goes with the call, another use of the same API on the next line stays",
            findings=(Expected(8, 22, "`torch.cuda.current_device` is CUDA-only and raises without CUDA"),),
        ),
        invalid(
            """
            import torch
            import utils

            edge_idx = utils.cuda(torch.cuda.current_device())
            """,
            target="sagemaker",
            note="the argument of a project helper named cuda, which XLA102 keeps (sagemaker)",
            findings=(Expected(4, 23, "`torch.cuda.current_device` is CUDA-only and raises without CUDA"),),
        ),
    )
