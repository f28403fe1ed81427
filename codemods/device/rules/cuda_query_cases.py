"""XLA101's cases about a CUDA device handed to a CUDA-only API that never runs on XLA
(``torch.cuda.get_device_properties(torch.device("cuda"))`` after ``if not
torch.cuda.is_available(): return``): the device stays; the same call where it runs on XLA is
still rewritten (and XLA506 reports the API)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

GUARDED_QUERY = """
import torch


class Attend(torch.nn.Module):
    def __init__(self, flash=False):
        super().__init__()
        self.cuda_config = None
        if not torch.cuda.is_available() or not flash:
            return
        props = torch.cuda.get_device_properties(torch.device("cuda"))
        self.cuda_config = props.major == 8
"""

ALIASED_GUARDED_QUERY = """
import torch as th


def a100():
    if not th.cuda.is_available():
        return False
    return th.cuda.get_device_capability(th.device("cuda:0")) == (8, 0)
"""

UNGUARDED_QUERY = """
import torch


def props():
    return torch.cuda.get_device_properties(torch.device("cuda"))
"""


def cuda_query_valid() -> tuple[Valid, ...]:
    return (
        valid(GUARDED_QUERY, note="cuda-device-of-a-cuda-query-after-an-early-return"),
        valid(GUARDED_QUERY, target="sagemaker", note="cuda-device-of-a-cuda-query-after-an-early-return-sagemaker"),
        valid(ALIASED_GUARDED_QUERY, note="aliased-cuda-device-of-a-guarded-cuda-query"),
        valid(ALIASED_GUARDED_QUERY, target="sagemaker", note="aliased-cuda-device-of-a-guarded-cuda-query-sagemaker"),
    )


def cuda_query_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            UNGUARDED_QUERY,
            """
            import torch
            import torch_xla


            def props():
                return torch.cuda.get_device_properties(torch_xla.device())
            """,
            note="cuda-device-of-a-cuda-query-that-runs-on-xla",
            findings=(Expected(6, 45, 'torch.device("cuda") -> torch_xla.device()'),),
        ),
        invalid(
            UNGUARDED_QUERY,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def props():
                return torch.cuda.get_device_properties(xm.xla_device())
            """,
            target="sagemaker",
            note="cuda-device-of-a-cuda-query-that-runs-on-xla-sagemaker",
            findings=(Expected(6, 45, 'torch.device("cuda") -> xm.xla_device()'),),
        ),
    )
