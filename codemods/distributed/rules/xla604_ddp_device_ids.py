"""XLA604 ddp-device-ids."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

DDP_DEVICE_IDS = Rule(
    code="XLA604",
    name="ddp-device-ids",
    severity="error",
    summary="DistributedDataParallel on XLA takes no device_ids/output_device; inputs it moved to the GPU are made on the device",
    fixable=True,
    why="device_ids name CUDA devices; on the xla backend DDP wraps the model on this process's XLA device and "
    "all-reduces the gradients itself, so the optimizer step stays plain (gradients are reduced once).",
    examples=lambda: (
        invalid(
            """
        from torch.nn.parallel import DistributedDataParallel as DDP


        def wrap(model, local_rank):
            return DDP(model, device_ids=[local_rank], output_device=local_rank)
        """,
            """
        from torch.nn.parallel import DistributedDataParallel as DDP


        def wrap(model, local_rank):
            return DDP(model)
        """,
            findings=(Expected(5, 12, "device_ids, output_device removed from DDP(...)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            """,
            note="no-device-ids",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl")
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], output_device=0)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            dist.init_process_group("xla", init_method="xla://")
            model = torch.nn.parallel.DistributedDataParallel(model)
            """,
            note="ddp-keywords",
            findings=(
                Expected(6, 9, "device_ids, output_device removed from torch.nn.parallel.DistributedDataParallel(...)"),
            ),
        ),
        invalid(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, [local_rank])
            """,
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            """,
            note="positional-device-ids",
            alias=True,
            findings=(Expected(3, 9, "device_ids removed from DDP(...)"),),
        ),
    ),
)
