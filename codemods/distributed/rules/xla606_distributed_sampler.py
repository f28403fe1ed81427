"""XLA606 distributed-sampler."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

DISTRIBUTED_SAMPLER = Rule(
    code="XLA606",
    name="distributed-sampler",
    severity="error",
    summary="Training data is split by a DistributedSampler built from the XLA world size and rank, reshuffled each epoch",
    fixable=True,
    why="Without it every process trains on the same batches; a sampler that asks the default process group "
    "for its rank is given the XLA runtime's instead.",
    examples=lambda: (
        invalid(
            """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler


        def data(dataset):
            dist.init_process_group("nccl")
            return DistributedSampler(dataset)
        """,
            """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def data(dataset):
            dist.init_process_group("xla", init_method="xla://")
            return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
        """,
            findings=(Expected(9, 12, "DistributedSampler"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=8, shuffle=True)
            """,
            note="one-device-loader",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader


            def main():
                dist.init_process_group("nccl")
                loader = DataLoader(dataset, batch_size=8, shuffle=True)
                for epoch in range(3):
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                dist.init_process_group("xla", init_method="xla://")
                loader = DataLoader(dataset, batch_size=8, shuffle=False, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))
                for epoch in range(3):
                    loader.sampler.set_epoch(epoch)
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        xm.optimizer_step(optimizer)
                        torch_xla.sync()
            """,
            note="loader-gets-sampler",
            findings=(
                Expected(11, 14, "training DataLoader"),
                Expected(12, 5, "loader.sampler.set_epoch(epoch) each epoch"),
            ),
        ),
        invalid(
            """
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler as DS

            dist.init_process_group("nccl")
            sampler = DS(dataset, shuffle=True)
            """,
            """
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler as DS
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            dist.init_process_group("xla", init_method="xla://")
            sampler = DS(dataset, shuffle=True, num_replicas=xr.world_size(), rank=xr.global_ordinal())
            """,
            note="sampler-alias",
            alias=True,
            findings=(Expected(7, 11, "DS: num_replicas and rank from the XLA runtime"),),
        ),
    ),
)
