"""XLA601 xla-process-group."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

XLA_PROCESS_GROUP = Rule(
    code="XLA601",
    name="xla-process-group",
    severity="error",
    summary='init_process_group uses the "xla" backend with init_method="xla://" (nccl/gloo cannot reduce XLA tensors; '
    "sagemaker: rank and world size from the runtime, MASTER_ADDR/MASTER_PORT set)",
    fixable=True,
    why="NCCL and Gloo work on CUDA and CPU tensors; XLA tensors are reduced by the xla backend, which takes the "
    "rank and world size from the XLA runtime (so rank=/world_size= go). torch 1.13 has no xla:// rendezvous "
    "(pjrt:// came with torch_xla 2.0, xla:// with 2.2: 'No rendezvous handler for xla://'), so on the sagemaker "
    "target the default env:// store meets at MASTER_ADDR/MASTER_PORT (set with `os.environ.setdefault` just "
    "before, so a launcher's values win) and rank and world size are passed from `xm.get_ordinal()` and "
    "`xm.xrt_world_size()`, as torch_xla 1.13's own tests do.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(6, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401

            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="already-xla",
        ),
        valid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401

            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="already-xla-on-1.13",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def setup(rank, world_size):
                # join the others
                dist.init_process_group("nccl", rank=rank, world_size=world_size)
            """,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(rank, world_size):
                # join the others
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="sagemaker-env-rendezvous",
            findings=(
                Expected(
                    11,
                    5,
                    'dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size()): '
                    'the "xla" backend, rank and world size from the XLA runtime; torch 1.13\'s env:// store',
                ),
            ),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend
            import torch_xla.core.xla_model as xm


            def setup():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            target="sagemaker",
            note="2.9-group-moved-to-1.13",
            findings=(Expected(10, 5, 'dist.init_process_group("xla", rank=xm.get_ordinal()'),),
        ),
        # A 1.13 script upgraded: its plain xla_backend import stays the only one.
        invalid(
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend


            def setup():
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="1.13-group-upgraded-imports-once",
            findings=(Expected(6, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch.distributed as dist

            def setup(rank, world):
                dist.init_process_group(backend="nccl", init_method="env://", rank=rank, world_size=world)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank, world):
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="keyword-backend",
            findings=(Expected(5, 5, 'dist.init_process_group("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch.distributed as dist

            backend = "nccl"

            def setup():
                dist.init_process_group(backend)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            backend = "xla"

            def setup():
                dist.init_process_group(backend, init_method="xla://")
            """,
            note="backend-variable",
            findings=(
                Expected(4, 11, '"nccl" -> "xla"'),
                Expected(7, 5, 'dist.init_process_group(backend, init_method="xla://")'),
            ),
        ),
        invalid(
            """
            from torch.distributed import init_process_group as ipg

            def setup():
                ipg("gloo")
            """,
            """
            from torch.distributed import init_process_group as ipg
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup():
                ipg("xla", init_method="xla://")
            """,
            note="from-import",
            alias=True,
            findings=(Expected(5, 5, 'ipg("xla", init_method="xla://")'),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup(rank):
                device = torch.device(f"cuda:{rank}")
                backend = torch.distributed.get_default_backend_for_device(device)
                dist.init_process_group(backend=backend)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup(rank):
                device = torch_xla.device()
                backend = "xla"
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="default-backend-for-the-device",
            findings=(
                Expected(8, 15, 'torch.distributed.get_default_backend_for_device(device) -> "xla"'),
                Expected(9, 5, 'dist.init_process_group("xla", init_method="xla://")'),
            ),
        ),
    ),
)
