"""XLA602's cases about reads of the process group's rank and size that run only once the group
is up (``if dist.is_initialized():``, after ``if not dist.is_initialized(): return``, after the
function's own ``init_process_group``): right as written on the "xla" backend, so left alone;
a read that a flag alone may also let through (``if dist.is_initialized() or distributed:``)
still becomes the runtime's."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

GUARDED = """
import torch
import torch.distributed as dist


def gather(x):
    if dist.is_available() and dist.is_initialized():
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        out[dist.get_rank()] = x
        return torch.cat(out)
    return x


def rank():
    if not dist.is_initialized():
        return 0
    return dist.get_rank()


def scale(loss):
    return loss / dist.get_world_size() if dist.is_initialized() else loss
"""

ALIASED_AFTER_INIT = """
import torch
from torch.distributed import get_rank, get_world_size, is_initialized


def shard(x):
    if is_initialized():
        return x.chunk(get_world_size())[get_rank()]
    return x
"""

FLAG_OR_GROUP = """
import torch
import torch.distributed as dist


def shard(x, distributed):
    if dist.is_initialized() or distributed:
        return x.chunk(dist.get_world_size())[dist.get_rank()]
    return x
"""


def group_read_valid() -> tuple[Valid, ...]:
    return (
        valid(GUARDED, note="reads-under-is-initialized"),
        valid(GUARDED, target="sagemaker", note="reads-under-is-initialized-sagemaker"),
        valid(ALIASED_AFTER_INIT, note="aliased-reads-under-is-initialized"),
        valid(ALIASED_AFTER_INIT, target="sagemaker", note="aliased-reads-under-is-initialized-sagemaker"),
    )


def group_read_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            FLAG_OR_GROUP,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.runtime as xr


            def shard(x, distributed):
                if dist.is_initialized() or distributed:
                    return x.chunk(xr.world_size())[xr.global_ordinal()]
                return x
            """,
            note="a-flag-may-let-the-read-through-without-a-group",
            findings=(
                Expected(8, 24, "dist.get_world_size() -> xr.world_size()"),
                Expected(8, 41, "dist.get_rank() -> xr.global_ordinal()"),
            ),
        ),
        invalid(
            FLAG_OR_GROUP,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm


            def shard(x, distributed):
                if dist.is_initialized() or distributed:
                    return x.chunk(xm.xrt_world_size())[xm.get_ordinal()]
                return x
            """,
            target="sagemaker",
            note="a-flag-may-let-the-read-through-without-a-group-sagemaker",
            findings=(
                Expected(8, 24, "dist.get_world_size() -> xm.xrt_world_size()"),
                Expected(8, 45, "dist.get_rank() -> xm.get_ordinal()"),
            ),
        ),
    )
