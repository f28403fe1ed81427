"""XLA6: multi-process and multi-GPU training (rewrite.py says what each becomes)."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

XLA_PROCESS_GROUP = Rule(
    "XLA601", "xla-process-group", "error",
    'init_process_group uses the "xla" backend with init_method="xla://" (nccl/gloo cannot reduce XLA tensors)', True,
    why="NCCL and Gloo work on CUDA and CPU tensors; XLA tensors are reduced by the xla backend, which takes the "
    "rank and world size from the XLA runtime (so rank=/world_size= go).",
    examples=(example(
        """
        import torch.distributed as dist


        def setup(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
        """,
        """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def setup(rank, world_size):
            dist.init_process_group("xla", init_method="xla://")
        """,
    ),),
)

XLA_RANKS = Rule(
    "XLA602", "xla-ranks", "error",
    "Ranks and world sizes come from the XLA runtime, not LOCAL_RANK/RANK/WORLD_SIZE, dist.get_rank() or CUDA counts", True,
    why="The XLA launcher sets none of torchrun's environment variables, and torch.cuda.device_count() is 0 on an "
    "XLA machine: the runtime knows each process's ordinal and how many there are. A CUDA count that the "
    "launching process hands to its workers is read again inside them; where the launching process also computes "
    "with it (`lr = 0.1 * world_size`) it is reported there, as it is still 0 (a print of it, or a count under "
    "`if torch.cuda.is_available():`, which is False on XLA, is not).",
    examples=(example(
        """
        import os
        import torch.distributed as dist


        def setup():
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            world_size = dist.get_world_size()
        """,
        """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def setup():
            dist.init_process_group("xla", init_method="xla://")
            local_rank = xr.local_ordinal()
            world_size = xr.world_size()
        """,
    ),),
)

XLA_LAUNCH = Rule(
    "XLA603", "xla-launch", "error",
    "mp.spawn, a torchrun-style main guard and an old xmp.spawn start the processes with the XLA launcher", True,
    why="XLA starts one process per device itself and hands each its index: torch_xla.launch on torch_xla 2.9, "
    "xmp.spawn on 1.13 (SageMaker's pytorchxla runtime calls `_mp_fn(index)` directly).",
    examples=(example(
        """
        import torch.multiprocessing as mp


        def train(rank, world_size):
            pass


        if __name__ == "__main__":
            mp.spawn(train, args=(8,), nprocs=8, join=True)
        """,
        """
        import torch_xla


        def train(rank, world_size):
            pass


        if __name__ == "__main__":
            torch_xla.launch(train, args=(8,))
        """,
    ),),
)

DDP_DEVICE_IDS = Rule(
    "XLA604", "ddp-device-ids", "error",
    "DistributedDataParallel on XLA takes no device_ids/output_device; inputs it moved to the GPU are made on the device", True,
    why="device_ids name CUDA devices; on the xla backend DDP wraps the model on this process's XLA device and "
    "all-reduces the gradients itself, so the optimizer step stays plain (gradients are reduced once).",
    examples=(example(
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
    ),),
)

DATA_PARALLEL = Rule(
    "XLA605", "data-parallel", "info",
    "nn.DataParallel (one process, several GPUs) is removed with its .module accesses; kept and reported where "
    "the tool cannot follow them", True,
    why="Without CUDA devices DataParallel only calls the wrapped model; on XLA one process drives one device, "
    "and more devices mean more processes (DDP).",
    examples=(example(
        """
        import torch
        import torch.nn as nn


        def build(model):
            model = nn.DataParallel(model)
            return model.module
        """,
        """
        import torch


        def build(model):
            return model
        """,
    ),),
)

DISTRIBUTED_SAMPLER = Rule(
    "XLA606", "distributed-sampler", "error",
    "Training data is split by a DistributedSampler built from the XLA world size and rank, reshuffled each epoch", True,
    why="Without it every process trains on the same batches; a sampler that asks the default process group "
    "for its rank is given the XLA runtime's instead.",
    examples=(example(
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
    ),),
)

AMP_GRADIENT_ALL_REDUCE = Rule(
    "XLA607", "amp-gradient-all-reduce", "error",
    "Without DDP, a mixed-precision step all-reduces the gradients right after the scaled backward pass", True,
    why="xm.optimizer_step averages gradients over the processes, but a GradScaler step does not: the seed's "
    "recipe fetches the gradients and all-reduces them with scale=1.0/world size.",
    examples=(example(
        """
        import torch
        import torch.distributed as dist


        def train(loader, model, optimizer):
            dist.init_process_group("nccl")
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """,
        """
        import torch
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def train(loader, model, optimizer):
            dist.init_process_group("xla", init_method="xla://")
            scaler = torch.amp.GradScaler("xla")
            for x, y in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                xm.all_reduce("sum", xm._fetch_gradients(optimizer), scale=1.0 / xr.world_size())
                scaler.step(optimizer)
                scaler.update()
                torch_xla.sync()
        """,
    ),),
)

HOGWILD = Rule(
    "XLA608", "hogwild", "error",
    "Hogwild training (a shared-memory model updated by several processes) cannot run on XLA", False,
    why="Device tensors are not shared between processes: each worker would train its own copy.",
    examples=(example(
        """
        import torch.multiprocessing as mp

        model.share_memory()
        workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]
        """,
    ),),
)

DISTRIBUTED_MANUAL = Rule(
    "XLA609", "distributed-manual", "error",
    "Multi-process code the tool cannot port safely: what to do by hand", False,
    why="Environment variables the XLA launcher does not set, ranks read in the launching process (where the "
    "XLA runtime may not start) and training at module level need a person.",
    examples=(example(
        """
        import os
        import torch.distributed as dist


        def setup():
            dist.init_process_group("nccl")
            return os.environ["RANK"]
        """,
        """
        import os
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def setup():
            dist.init_process_group("xla", init_method="xla://")
            return os.environ["RANK"]
        """,
    ),),
)

MASTER_PRINT = Rule(
    "XLA610", "master-print", "info",
    "A print under a check for the master process (`if rank == 0:`) becomes xm.master_print", True,
    why="xm.master_print prints on the master process only, which is what the check said; it is the seed's "
    "spelling and leaves no rank test behind. A check on the local rank (once per host) is left as it is.",
    examples=(example(
        """
        import torch.distributed as dist


        def report(loss):
            dist.init_process_group("nccl")
            if dist.get_rank() == 0:
                print(f"loss {loss:.3f}")
        """,
        """
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def report(loss):
            dist.init_process_group("xla", init_method="xla://")
            xm.master_print(f"loss {loss:.3f}")
        """,
    ),),
)

MODULE_LEVEL_DISTRIBUTED = Rule(
    "XLA614", "module-level-distributed", "info",
    "Distributed training at module level stays one process under `python` and several under torchrun", False,
    why="A script that trains at module level (nanoGPT, build-nanogpt, llama2.c) has no function for "
    "`torch_xla.launch` to start, and wrapping the whole module would change what its globals mean. Its own "
    "check for a launcher (`ddp = int(os.environ.get('RANK', -1)) != -1`) therefore stays and keeps its "
    "meaning: run as `python train.py` it takes the one-device branch on the XLA device; run under "
    "`torchrun --nproc-per-node=N` (with PJRT_DEVICE set) each process joins the xla:// process group, "
    "which torch_xla supports since 2.1. CUDA assertions in the distributed branch are removed (XLA104). "
    "Folding the check to True instead would send a plain `python train.py` into the distributed branch, "
    "with no launcher to start it.",
    examples=(example(
        """
        import os
        import torch
        from torch.distributed import init_process_group

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            assert torch.cuda.is_available()
            init_process_group(backend="nccl")
        device = "cuda"
        """,
        """
        import os
        import torch
        from torch.distributed import init_process_group
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            init_process_group("xla", init_method="xla://")
        device = "xla"
        """,
    ),),
)

RULES = (XLA_PROCESS_GROUP, XLA_RANKS, XLA_LAUNCH, DDP_DEVICE_IDS, DATA_PARALLEL, DISTRIBUTED_SAMPLER, AMP_GRADIENT_ALL_REDUCE, HOGWILD, DISTRIBUTED_MANUAL, MASTER_PRINT, MODULE_LEVEL_DISTRIBUTED)
