"""XLA602's cases about the process group's rank (``dist.get_rank()``): the runtime's ordinal, and
the finding says why the group's rank is not the device's (several devices can run as threads of
one process, which has one process group)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

# What the finding on dist.get_rank() says beyond the port (both targets).
SHARED_GROUP_RANK = "every device there reads the same group rank, while"

# dist.get_rank() after the process group is up: one input for the cases of both targets, whose outputs differ.
GROUP_RANK_AFTER_INIT = """
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    return rank, world_size
"""

# The same read imported under another name.
GROUP_RANK_ALIASED = """
from torch.distributed import get_rank as group_rank, init_process_group


def setup():
    init_process_group("nccl")
    return group_rank()
"""


def group_rank_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            GROUP_RANK_AFTER_INIT,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def setup():
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
                world_size = xr.world_size()
                return rank, world_size
            """,
            target="2.9",
            note="group-rank-is-shared-by-threads",
            findings=(
                Expected(
                    8,
                    12,
                    f"dist.get_rank() -> xr.global_ordinal(): the global rank from the XLA runtime; a process has one process group, so one group rank, and the XLA runtime may run several devices as threads of one process (PJRT on the CPU, TPU v2/v3): {SHARED_GROUP_RANK} xr.global_ordinal() is each device's own",
                ),
                Expected(9, 18, "dist.get_world_size() -> xr.world_size(): the world size from the XLA runtime"),
            ),
        ),
        invalid(
            GROUP_RANK_AFTER_INIT,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                rank = xm.get_ordinal()
                world_size = xm.xrt_world_size()
                return rank, world_size
            """,
            target="sagemaker",
            note="group-rank-is-shared-by-threads-sagemaker",
            findings=(
                Expected(
                    11,
                    12,
                    f"dist.get_rank() -> xm.get_ordinal(): the global rank from the XLA runtime; a process has one process group, so one group rank, and the XLA runtime may run several devices as threads of one process (PJRT on the CPU, TPU v2/v3): {SHARED_GROUP_RANK} xm.get_ordinal() is each device's own",
                ),
                Expected(12, 18, "dist.get_world_size() -> xm.xrt_world_size(): the world size from the XLA runtime"),
            ),
        ),
        invalid(
            GROUP_RANK_ALIASED,
            """
            from torch.distributed import init_process_group
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def setup():
                init_process_group("xla", init_method="xla://")
                return xr.global_ordinal()
            """,
            target="2.9",
            alias=True,
            note="group-rank-aliased",
            findings=(
                Expected(
                    8,
                    12,
                    f"group_rank() -> xr.global_ordinal(): the global rank from the XLA runtime; a process has one process group, so one group rank, and the XLA runtime may run several devices as threads of one process (PJRT on the CPU, TPU v2/v3): {SHARED_GROUP_RANK} xr.global_ordinal() is each device's own",
                ),
            ),
        ),
        invalid(
            GROUP_RANK_ALIASED,
            """
            from torch.distributed import init_process_group
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                return xm.get_ordinal()
            """,
            target="sagemaker",
            alias=True,
            note="group-rank-aliased-sagemaker",
            findings=(
                Expected(
                    11,
                    12,
                    f"group_rank() -> xm.get_ordinal(): the global rank from the XLA runtime; a process has one process group, so one group rank, and the XLA runtime may run several devices as threads of one process (PJRT on the CPU, TPU v2/v3): {SHARED_GROUP_RANK} xm.get_ordinal() is each device's own",
                ),
            ),
        ),
    )


def group_rank_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch.distributed as dist


            class Trainer:
                def get_rank(self):
                    return 0


            def rank_of(trainer):
                return trainer.get_rank() if dist.is_initialized() else 0
            """,
            note="own-get-rank-method",
        ),
    )
