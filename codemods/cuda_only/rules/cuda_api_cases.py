"""XLA506's cases for a CUDA API in the device argument of a `.cuda()` (which XLA102 rewrites, the
argument with it), and for a CUDA call behind a guard written in other shapes (an early return under
an ``or``, a conditional expression), kept apart from the rule so that its module holds the rule, its
messages and its hooks."""

from __future__ import annotations

from codemods.cuda_only.rules.null_stream_cases import null_stream_cuda_api_invalid, null_stream_cuda_api_valid
from codemods.cuda_only.rules.printed_count_cases import printed_count_cuda_api_invalid
from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid


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


def other_guard_valid() -> tuple[Valid, ...]:
    early_return = """
        import torch


        def tune():
            if not torch.cuda.is_available() or not enabled():
                return
            try:
                major, _ = torch.cuda.get_device_capability()
                print(major)
            except Exception as e:
                print(e)


        def pick(spec):
            job = spec["trial"] * 4
            count = torch.cuda.device_count()
            spec["cuda_id"] = job % count if torch.cuda.is_available() else None
        """
    return (
        valid(
            early_return,
            note="after an early return under an or with a negated availability check (in a try), and a count "
            "read only in a conditional expression under a kept availability check: never run on XLA",
        ),
        valid(
            substituted(early_return, ("import torch\n", "import torch as th\n"), ("torch.cuda", "th.cuda")),
            target="sagemaker",
            note="the same through an alias (sagemaker)",
        ),
        *null_stream_cuda_api_valid(),  # and the null stream (null_stream_cases.py)
    )


def other_guard_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch


            def tune():
                if not enabled() or torch.cuda.is_available():
                    return
                return torch.cuda.get_device_capability()


            def pick(spec):
                count = torch.cuda.device_count()
                spec["cuda_id"] = spec["trial"] % count if enabled() else None
            """,
            note="an or whose availability check is not negated, a conditional expression on another test: run on XLA",
            findings=(
                Expected(7, 12, "`torch.cuda.get_device_capability` is CUDA-only and raises without CUDA"),
                Expected(11, 13, '`spec["trial"] % count` computes with 0'),
            ),
        ),
        invalid(
            """
            import torch


            def tune():
                if not enabled() or torch.cuda.is_available():
                    return
                return torch.cuda.get_device_capability()
            """,
            target="sagemaker",
            note="an or whose availability check is not negated (sagemaker)",
            findings=(Expected(7, 12, "`torch.cuda.get_device_capability` is CUDA-only and raises without CUDA"),),
        ),
        *null_stream_cuda_api_invalid(),  # and streams that are not the null one
        *printed_count_cuda_api_invalid(),  # and a count a printed line divides by
    )
