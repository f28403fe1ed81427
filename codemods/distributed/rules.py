"""XLA6: multi-process and multi-GPU training (rewrite.py says what each becomes)."""

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

XLA_RANKS = Rule(
    code="XLA602",
    name="xla-ranks",
    severity="error",
    summary="Ranks and world sizes come from the XLA runtime, not LOCAL_RANK/RANK/WORLD_SIZE, dist.get_rank() or CUDA counts",
    fixable=True,
    why="The XLA launcher sets none of torchrun's environment variables, and torch.cuda.device_count() is 0 on an "
    "XLA machine: the runtime knows each process's ordinal and how many there are. A CUDA count that the "
    "launching process hands to its workers is read again inside them; where the launching process also computes "
    "with it (`lr = 0.1 * world_size`) it is reported there, as it is still 0 (a print of it, or a count under "
    "`if torch.cuda.is_available():`, which is False on XLA, is not).",
    examples=lambda: (
        invalid(
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
            findings=(
                Expected(8, 18, 'int(os.environ["LOCAL_RANK"]) -> xr.local_ordinal()'),
                Expected(9, 18, "dist.get_world_size() -> xr.world_size()"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import torch

            def main():
                workers = int(os.environ.get("NUM_WORKERS", 4))
                x = torch.zeros(workers)
            """,
            note="other-env",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import os
            import torch
            import torch.distributed as dist


            def main():
                if "LOCAL_RANK" in os.environ:
                    dist.init_process_group("nccl")
                    n_gpu = 1
                else:
                    n_gpu = torch.cuda.device_count()
                model = torch.nn.Linear(4, 2).cuda()
                if n_gpu > 1:
                    model = torch.nn.DataParallel(model)
                batch_size = 16 * max(1, n_gpu)


            if __name__ == "__main__":
                main()
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                if True:
                    dist.init_process_group("xla", init_method="xla://")
                    n_gpu = 1
                else:
                    n_gpu = 1
                model = torch.nn.Linear(4, 2).to(torch_xla.device())
                if n_gpu > 1:
                    pass
                batch_size = 16 * max(1, n_gpu)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            target="2.9",
            note="device-count-guarding-data-parallel-is-one",
            findings=(
                Expected(7, 8, "every process is started by the XLA launcher"),
                Expected(11, 17, "torch.cuda.device_count() -> 1: the devices this process drives"),
            ),
        ),
        invalid(
            """
            import os
            import torch
            import torch.distributed as dist


            def main():
                if "LOCAL_RANK" in os.environ:
                    dist.init_process_group("nccl")
                    n_gpu = 1
                else:
                    n_gpu = torch.cuda.device_count()
                model = torch.nn.Linear(4, 2).cuda()
                if n_gpu > 1:
                    model = torch.nn.DataParallel(model)
                batch_size = 16 * max(1, n_gpu)


            if __name__ == "__main__":
                main()
            """,
            """
            import os
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp


            def main():
                if True:
                    os.environ.setdefault("MASTER_ADDR", "localhost")
                    os.environ.setdefault("MASTER_PORT", "12355")
                    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                    n_gpu = 1
                else:
                    n_gpu = 1
                model = torch.nn.Linear(4, 2).to(xm.xla_device())
                if n_gpu > 1:
                    pass
                batch_size = 16 * max(1, n_gpu)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            note="device-count-guarding-data-parallel-is-one-1.13",
            findings=(
                Expected(10, 8, "every process is started by the XLA launcher"),
                Expected(16, 17, "torch.cuda.device_count() -> 1: the devices this process drives"),
            ),
        ),
        invalid(
            """
            import argparse
            import torch
            import torch.distributed as dist


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                args = parser.parse_args()
                if args.local_rank == -1:
                    device = torch.device("cuda")
                else:
                    dist.init_process_group(backend="nccl")
                    device = torch.device("cuda", args.local_rank)
                model = torch.nn.Linear(4, 2).to(device)
                if args.local_rank != -1:
                    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])


            if __name__ == "__main__":
                main()
            """,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                args = parser.parse_args()
                if False:
                    device = torch_xla.device()
                else:
                    dist.init_process_group("xla", init_method="xla://")
                    device = torch_xla.device()
                model = torch.nn.Linear(4, 2).to(device)
                if True:
                    model = torch.nn.parallel.DistributedDataParallel(model)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            target="2.9",
            note="local-rank-flag-minus-one-asks-launched",
            findings=(
                Expected(12, 8, "args.local_rank == -1 -> False: every process is started by the XLA launcher"),
                Expected(18, 8, "args.local_rank != -1 -> True"),
            ),
        ),
        invalid(
            """
            import argparse
            import torch
            import torch.distributed as dist


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                args = parser.parse_args()
                if args.local_rank == -1:
                    device = torch.device("cuda")
                else:
                    dist.init_process_group(backend="nccl")
                    device = torch.device("cuda", args.local_rank)
                model = torch.nn.Linear(4, 2).to(device)
                if args.local_rank != -1:
                    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])


            if __name__ == "__main__":
                main()
            """,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--local_rank", type=int, default=-1)
                args = parser.parse_args()
                if False:
                    device = xm.xla_device()
                else:
                    os.environ.setdefault("MASTER_ADDR", "localhost")
                    os.environ.setdefault("MASTER_PORT", "12355")
                    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                    device = xm.xla_device()
                model = torch.nn.Linear(4, 2).to(device)
                if True:
                    model = torch.nn.parallel.DistributedDataParallel(model)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            note="local-rank-flag-minus-one-asks-launched-1.13",
            findings=(
                Expected(14, 8, "args.local_rank == -1 -> False: every process is started by the XLA launcher"),
                Expected(22, 8, "args.local_rank != -1 -> True"),
            ),
        ),
        invalid(
            """
            import argparse
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                dist.init_process_group("nccl")
                return args.local_rank()
            """,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                dist.init_process_group("xla", init_method="xla://")
                return xr.local_ordinal()
            """,
            target="2.9",
            note="local-rank-holds-current-device",
            findings=(Expected(15, 12, "args.local_rank() -> xr.local_ordinal()"),),
        ),
        invalid(
            """
            import argparse
            import torch
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                dist.init_process_group("nccl")
                return args.local_rank()
            """,
            """
            import argparse
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()


            def local_setting(args):
                args.local_rank = torch.cuda.current_device
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                return xm.get_local_ordinal()
            """,
            target="sagemaker",
            note="local-rank-holds-current-device-1.13",
            findings=(Expected(18, 12, "args.local_rank() -> xm.get_local_ordinal()"),),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist

            def main(strict):
                assert "LOCAL_RANK" in os.environ, "run with torchrun"
                if strict:
                    assert "RANK" in os.environ and "WORLD_SIZE" in os.environ
                dist.init_process_group("nccl")
                local_rank = int(os.environ["LOCAL_RANK"])


            if __name__ == "__main__":
                main(True)
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def main(strict):
                if strict:
                    pass
                dist.init_process_group("xla", init_method="xla://")
                local_rank = xr.local_ordinal()


            def _mp_fn(index):
                main(True)


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="launcher-assert-removed",
            findings=(
                Expected(
                    6,
                    5,
                    'removed `assert "LOCAL_RANK" in os.environ, "run with torchrun"`: every process is '
                    "started by the XLA launcher",
                ),
                Expected(7, 9, 'removed `assert "RANK" in os.environ and "WORLD_SIZE" in os.environ`'),
                Expected(9, 18, 'int(os.environ["LOCAL_RANK"]) -> xr.local_ordinal()'),
            ),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist

            def main():
                assert "LOCAL_RANK" in os.environ, "run with torchrun"
                dist.init_process_group("nccl")
                local_rank = int(os.environ["LOCAL_RANK"])


            if __name__ == "__main__":
                main()
            """,
            """
            import os
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp

            def main():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                local_rank = xm.get_local_ordinal()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            note="launcher-assert-removed-sagemaker",
            findings=(
                Expected(
                    8,
                    5,
                    'removed `assert "LOCAL_RANK" in os.environ, "run with torchrun"`: every process is '
                    "started by the XLA launcher",
                ),
                Expected(11, 18, 'int(os.environ["LOCAL_RANK"]) -> xm.get_local_ordinal()'),
            ),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                world = dist.get_world_size()
                dist.init_process_group("nccl")
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def main():
                local_rank = xr.local_ordinal()
                world = xr.world_size()
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="env-ranks",
            findings=(
                Expected(6, 18, 'int(os.environ["LOCAL_RANK"]) -> xr.local_ordinal()'),
                Expected(7, 13, "dist.get_world_size() -> xr.world_size()"),
            ),
        ),
        invalid(
            """
            import torch.distributed as D

            def main():
                D.init_process_group("nccl")
                rank = D.get_rank()
            """,
            """
            import torch.distributed as D
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            def main():
                D.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
            """,
            note="dist-alias",
            alias=True,
            findings=(Expected(7, 12, "D.get_rank() -> xr.global_ordinal()"),),
        ),
        invalid(
            """
            import torch
            import torch.multiprocessing as mp

            def train(rank, world_size, lr):
                pass

            if __name__ == "__main__":
                world_size = torch.cuda.device_count()
                lr = 0.1 * world_size
                mp.spawn(train, args=(world_size, lr), nprocs=world_size)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.runtime as xr

            def train(rank, world_size, lr):
                world_size = xr.world_size()
                pass

            if __name__ == "__main__":
                world_size = torch.cuda.device_count()
                lr = 0.1 * world_size
                torch_xla.launch(train, args=(world_size, lr))
            """,
            note="count-also-used-by-launcher",
            findings=(
                Expected(5, 1, "`world_size` read from the XLA runtime when `train` starts"),
                Expected(11, 16, "the launching process still sees 0"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.multiprocessing as mp

            def train(rank, world_size):
                pass

            if __name__ == "__main__":
                world_size = torch.cuda.device_count() if torch.cuda.is_available() else 1
                print(f"{world_size} processes")
                mp.spawn(train, args=(world_size,), nprocs=world_size)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.runtime as xr

            def train(rank, world_size):
                world_size = xr.world_size()
                pass

            if __name__ == "__main__":
                world_size = torch.cuda.device_count() if torch.cuda.is_available() else 1
                print(f"{world_size} processes")
                torch_xla.launch(train, args=(world_size,))
            """,
            note="guarded-or-logged-count",
            findings=(Expected(5, 1, "`world_size` read from the XLA runtime when `train` starts"),),
        ),
        invalid(
            """
            import torch
            import torch.multiprocessing as mp

            def worker(gpu, ngpus_per_node, args):
                args.batch_size = int(args.batch_size / ngpus_per_node)

            def main(args):
                if device.type == "cuda":
                    ngpus_per_node = torch.accelerator.device_count()
                else:
                    ngpus_per_node = 1
                mp.spawn(worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.runtime as xr

            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xr.local_process_count()
                args.batch_size = int(args.batch_size / ngpus_per_node)

            def main(args):
                if device.type == "cuda":
                    ngpus_per_node = torch.accelerator.device_count()
                else:
                    ngpus_per_node = 1
                torch_xla.launch(worker, args=(ngpus_per_node, args))
            """,
            note="accelerator-count-on-one-branch",
            alias=True,
            findings=(Expected(5, 1, "`ngpus_per_node` read from the XLA runtime when `worker` starts"),),
        ),
        invalid(
            """
            import torch
            import torch.multiprocessing as mp

            def worker(gpu, ngpus_per_node, args):
                args.batch_size = int(args.batch_size / ngpus_per_node)

            def main(args):
                ngpus_per_node = torch.cuda.device_count()
                mp.spawn(worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp

            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xm.xrt_world_size()
                args.batch_size = int(args.batch_size / ngpus_per_node)

            def main(args):
                ngpus_per_node = torch.cuda.device_count()
                xmp.spawn(worker, args=(ngpus_per_node, args))
            """,
            target="sagemaker",
            note="per-host-count-on-1.13",
            findings=(Expected(5, 1, "xm.xrt_world_size() counts the devices of every host (hosts x devices)"),),
        ),
    ),
)

XLA_LAUNCH = Rule(
    code="XLA603",
    name="xla-launch",
    severity="error",
    summary="mp.spawn, a torchrun-style main guard and an old xmp.spawn start the processes with the XLA launcher",
    fixable=True,
    changes_start="launcher",
    why="XLA starts one process per device itself and hands each its index: torch_xla.launch on torch_xla 2.9, "
    "xmp.spawn on 1.13 (SageMaker's pytorchxla runtime calls `_mp_fn(index)` directly).",
    examples=lambda: (
        invalid(
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
            findings=(Expected(9, 5, "mp.spawn(...) -> torch_xla.launch"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def main():
                model = torch.nn.Linear(2, 2)


            if __name__ == "__main__":
                main()
            """,
            note="one-device",
        ),
    ),
    invalid=lambda: (
        # With an _mp_fn, which SageMaker's runtime calls, only the launcher's name changes.
        invalid(
            """
            import torch_xla


            def _mp_fn(index):
                pass


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn)
            """,
            """
            import torch_xla.distributed.xla_multiprocessing as xmp


            def _mp_fn(index):
                pass


            if __name__ == "__main__":
                xmp.spawn(_mp_fn)
            """,
            target="sagemaker",
            note="torch-xla-launch-of-mp-fn-on-1.13",
            findings=(Expected(9, 5, "torch_xla.launch(...) -> xmp.spawn: torch_xla 1.13's launcher"),),
        ),
        # torch_xla 1.13 has no torch_xla.launch: it spawns with xmp.spawn.
        invalid(
            """
            import torch_xla


            def train(index, lr):
                pass


            if __name__ == "__main__":
                torch_xla.launch(train, args=(0.1,), debug_single_process=False)
            """,
            """
            import torch_xla.distributed.xla_multiprocessing as xmp


            def train(index, lr):
                pass


            if __name__ == "__main__":
                xmp.spawn(train, args=(0.1,))
            """,
            target="sagemaker",
            note="torch-xla-launch-on-1.13",
            findings=(
                Expected(
                    9,
                    5,
                    "SageMaker's pytorchxla runtime does not run this: it imports the script and calls "
                    "`_mp_fn(index)` in each process; define `def _mp_fn(index):` that calls train(index, ...)",
                ),
                Expected(
                    9,
                    5,
                    "torch_xla.launch(...) -> xmp.spawn: torch_xla 1.13's launcher (without "
                    "debug_single_process=False: for one process, pass nprocs=1)",
                ),
            ),
        ),
        invalid(
            """
            import os
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                rank = int(os.environ["RANK"])


            if __name__ == "__main__":
                main()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="torchrun-main-guard",
            findings=(Expected(11, 1, "the main guard's code -> def _mp_fn(index)"),),
        ),
        invalid(
            """
            from torch.multiprocessing import spawn


            def worker(index):
                pass


            if __name__ == "__main__":
                spawn(worker, nprocs=2)
            """,
            """
            import torch_xla


            def worker(index):
                pass


            if __name__ == "__main__":
                torch_xla.launch(worker)
            """,
            note="spawn-from-import",
            alias=True,
            findings=(Expected(9, 5, "spawn(...) -> torch_xla.launch"),),
        ),
        invalid(
            """
            import torch_xla.distributed.xla_multiprocessing as xmp


            def _mp_fn(index, flags):
                pass


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=({},), nprocs=8, start_method="fork")
            """,
            """
            import torch_xla


            def _mp_fn(index, flags):
                pass


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=({},), start_method="fork")
            """,
            note="old-xmp-spawn",
            findings=(Expected(9, 5, "xmp.spawn(...) -> torch_xla.launch"),),
        ),
    ),
)

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

DATA_PARALLEL = Rule(
    code="XLA605",
    name="data-parallel",
    severity="info",
    summary="nn.DataParallel (one process, several GPUs) is removed with its .module accesses; kept and reported where "
    "the tool cannot follow them",
    fixable=True,
    why="Without CUDA devices DataParallel only calls the wrapped model; on XLA one process drives one device, "
    "and more devices mean more processes (DDP).",
    examples=lambda: (
        invalid(
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
            findings=(
                Expected(5, 5, "removed `model = nn.DataParallel(model)`"),
                Expected(5, 12, "model.module -> model"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            state = model.module.state_dict()
            """,
            note="no-data-parallel",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            torch.save(model.module.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "m.pt")
            """,
            note="module-access",
            findings=(
                Expected(4, 1, "removed `model = torch.nn.DataParallel(model)`"),
                Expected(4, 9, "model.module -> model"),
            ),
        ),
        invalid(
            """
            from torch.nn import DataParallel as DP

            net = DP(build()).cuda()
            """,
            """
            import torch_xla

            net = build().to(torch_xla.device())
            """,
            note="from-import",
            alias=True,
            findings=(Expected(3, 7, "DP(build()) -> build()"),),
        ),
    ),
)

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

AMP_GRADIENT_ALL_REDUCE = Rule(
    code="XLA607",
    name="amp-gradient-all-reduce",
    severity="error",
    summary="Without DDP, a mixed-precision step all-reduces the gradients right after the scaled backward pass",
    fixable=True,
    why="xm.optimizer_step averages gradients over the processes, but a GradScaler step does not: the AWS guide's "
    "recipe fetches the gradients and all-reduces them with scale=1.0/world size.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(15, 9, 'gradients all-reduced after the scaled backward pass (xm.all_reduce("sum",'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP


            def train(loader, model, optimizer):
                dist.init_process_group("nccl")
                model = DDP(model)
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
            from torch.nn.parallel import DistributedDataParallel as DDP
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(loader, model, optimizer):
                dist.init_process_group("xla", init_method="xla://")
                model = DDP(model)
                scaler = torch.amp.GradScaler("xla")
                for x, y in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    torch_xla.sync()
            """,
            note="ddp-reduces",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as D
            from torch.cuda.amp import GradScaler, autocast


            def train(loader, model, opt):
                D.init_process_group("nccl")
                scaler = GradScaler()
                for x, y in loader:
                    with autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
            """,
            """
            import torch.distributed as D
            import torch.amp
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def train(loader, model, opt):
                D.init_process_group("xla", init_method="xla://")
                scaler = torch.amp.GradScaler("xla")
                for x, y in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    xm.all_reduce("sum", xm._fetch_gradients(opt), scale=1.0 / xr.world_size())
                    scaler.step(opt)
                    scaler.update()
                    torch_xla.sync()
            """,
            note="amp-from-import",
            alias=True,
            findings=(Expected(15, 9, 'gradients all-reduced after the scaled backward pass (xm.all_reduce("sum",'),),
        ),
    ),
)

HOGWILD = Rule(
    code="XLA608",
    name="hogwild",
    severity="error",
    summary="Hogwild training (a shared-memory model updated by several processes) cannot run on XLA",
    fixable=False,
    why="Device tensors are not shared between processes: each worker would train its own copy.",
    examples=lambda: (
        invalid(
            """
        import torch.multiprocessing as mp

        model.share_memory()
        workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]
        """,
            findings=(Expected(3, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model.share_memory()
            """,
            note="share-memory-alone",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.multiprocessing as mp

            model.share_memory()
            processes = []
            for rank in range(4):
                p = mp.Process(target=train, args=(model,))
                p.start()
            """,
            note="hogwild",
            findings=(Expected(3, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
        invalid(
            """
            import multiprocessing
            import torch

            model.share_memory()
            p = multiprocessing.Process(target=train, args=(model,))
            """,
            note="multiprocessing-process",
            alias=True,
            findings=(Expected(4, 1, "Hogwild training (a model in shared memory, updated by several processes at"),),
        ),
    ),
)

DISTRIBUTED_MANUAL = Rule(
    code="XLA609",
    name="distributed-manual",
    severity="error",
    summary="Multi-process code the tool cannot port safely: what to do by hand",
    fixable=False,
    why="Environment variables the XLA launcher does not set, ranks read in the launching process (where the "
    "XLA runtime may not start) and training at module level need a person. So does a launcher of its own (a "
    "script that starts its workers with subprocess or os.exec*, RANK/LOCAL_RANK/WORLD_SIZE in their "
    "environment, and starts no process group): it stays as it is, since wrapping it in torch_xla.launch would "
    "start every worker once per device; its workers are not torchrun's, so start the training script with "
    "torchrun or torch_xla.launch instead.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(8, 12, "`RANK` read from the environment"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401


            def setup():
                dist.init_process_group("xla", init_method="xla://")
                port = os.environ.get("MASTER_PORT", "12355")
            """,
            note="ported",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import os
            import torch.distributed as dist

            dist.init_process_group("nccl")
            rank = os.environ["RANK"]
            """,
            """
            import os
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            dist.init_process_group("xla", init_method="xla://")
            rank = os.environ["RANK"]
            """,
            note="raw-env",
            findings=(
                Expected(5, 1, "distributed training at module level"),
                Expected(6, 8, "`RANK` read from the environment"),
            ),
        ),
        invalid(
            """
            import os as O
            import torch.distributed as dist

            dist.init_process_group("nccl")
            world = O.getenv("WORLD_SIZE")
            """,
            """
            import os as O
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            dist.init_process_group("xla", init_method="xla://")
            world = O.getenv("WORLD_SIZE")
            """,
            note="getenv",
            alias=True,
            findings=(
                Expected(5, 1, "distributed training at module level"),
                Expected(6, 9, "`WORLD_SIZE` read from the environment"),
            ),
        ),
        # A launcher of its own: it starts its workers with rank variables in their
        # environment and no process group; it stays as it is (no torch_xla.launch).
        invalid(
            """
            import os
            import subprocess
            import sys

            import torch


            def main():
                for rank in range(int(os.environ.get("WORLD_SIZE", "1"))):
                    env = {**os.environ, "RANK": str(rank)}
                    subprocess.Popen([sys.executable, "train.py"], env=env)


            if __name__ == "__main__":
                main()
            """,
            note="a-launcher-of-its-own",
            findings=(Expected(11, 9, "`subprocess.Popen(...)` starts this script's workers with rank variables"),),
        ),
    ),
)

MASTER_PRINT = Rule(
    code="XLA610",
    name="master-print",
    severity="info",
    summary="A print under a check for the master process (`if rank == 0:`) becomes xm.master_print",
    fixable=True,
    why="xm.master_print prints on the master process only, which is what the check said; it is the AWS guide's "
    "spelling and leaves no rank test behind. A check on the local rank (once per host) is left as it is.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(8, 5, "`if dist.get_rank() == 0"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist


            def main(local_rank):
                dist.init_process_group("nccl")
                if local_rank == 0:
                    print("once per host")
                if dist.get_rank() == 0:
                    print("saving")
                    save()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main(local_rank):
                dist.init_process_group("xla", init_method="xla://")
                if local_rank == 0:
                    print("once per host")
                if xr.global_ordinal() == 0:
                    print("saving")
                    save()
            """,
            note="local-rank-or-more-than-a-print",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                if rank == 0:
                    print("starting", flush=True)
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
                xm.master_print("starting", flush=True)
            """,
            note="rank-variable",
            findings=(Expected(10, 5, "`if rank == 0"),),
        ),
        invalid(
            """
            import torch.distributed as D


            def main():
                D.init_process_group("nccl")
                master_process = D.get_rank() == 0
                if master_process:
                    print("hello")
            """,
            """
            import torch.distributed as D
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                D.init_process_group("xla", init_method="xla://")
                master_process = xr.global_ordinal() == 0
                xm.master_print("hello")
            """,
            note="master-flag",
            alias=True,
            findings=(Expected(10, 5, "`if master_process"),),
        ),
    ),
)

MODULE_LEVEL_DISTRIBUTED = Rule(
    code="XLA614",
    name="module-level-distributed",
    severity="info",
    summary="Distributed training at module level stays one process under `python` and several under torchrun",
    fixable=False,
    why="A script that trains at module level (nanoGPT, build-nanogpt, llama2.c) has no function for "
    "`torch_xla.launch` to start, and wrapping the whole module would change what its globals mean. Its own "
    "check for a launcher (`ddp = int(os.environ.get('RANK', -1)) != -1`) therefore stays and keeps its "
    "meaning: run as `python train.py` it takes the one-device branch on the XLA device; run under "
    "`torchrun --nproc-per-node=N` (with PJRT_DEVICE set) each process joins the xla:// process group, "
    "which torch_xla supports since 2.1. CUDA assertions in the distributed branch are removed (XLA104). "
    "Folding the check to True instead would send a plain `python train.py` into the distributed branch, "
    "with no launcher to start it.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(6, 7, "distributed training at module level stays under its launcher check"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import torch.distributed as dist


            def main():
                if int(os.environ.get("RANK", -1)) != -1:
                    dist.init_process_group(backend="nccl")


            if __name__ == "__main__":
                main()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                if True:
                    dist.init_process_group("xla", init_method="xla://")


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="a-function-the-launcher-starts",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import os
            import torch
            import torch.distributed as dist

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                assert torch.cuda.is_available(), "needs CUDA"
                dist.init_process_group(backend="nccl")
                rank = int(os.environ["RANK"])
            """,
            """
            import os
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
            """,
            note="check-kept",
            findings=(Expected(7, 7, "distributed training at module level stays under its launcher check"),),
        ),
        invalid(
            """
            import os as O
            from torch.distributed import init_process_group as setup

            if "LOCAL_RANK" in O.environ:
                setup("nccl")
            """,
            """
            import os as O
            from torch.distributed import init_process_group as setup
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            if "LOCAL_RANK" in O.environ:
                setup("xla", init_method="xla://")
            """,
            alias=True,
            findings=(Expected(5, 4, "distributed training at module level stays under its launcher check"),),
        ),
    ),
)

AVERAGE_ALL_REDUCE = Rule(
    code="XLA615",
    name="average-all-reduce",
    severity="error",
    summary="An all-reduce with ReduceOp.AVG becomes xm.all_reduce of the sum scaled by 1 / world size",
    fixable=True,
    why="torch_xla's xla process group maps SUM, PRODUCT, MIN, MAX, BAND and BOR to XLA's reductions and "
    "raises `ValueError: Invalid reduce op` for AVG (and PREMUL_SUM), so `dist.all_reduce(loss, "
    "op=dist.ReduceOp.AVG)` (build-nanogpt, nanoGPT's evaluation) crashes at its first call. xm.all_reduce "
    "with a list reduces in place, as dist.all_reduce does, and its scale makes the sum an average. A call "
    "with a group, async_op or its value used, and any other use of these ops, is reported.",
    examples=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def average(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                return loss
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def average(loss):
                dist.init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                return loss
            """,
            findings=(Expected(9, 5, "has no ReduceOp.AVG"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist


            def evaluate(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.SUM)
                loss /= dist.get_world_size()
                return loss
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss):
                dist.init_process_group("xla", init_method="xla://")
                dist.all_reduce(loss, op=dist.ReduceOp.SUM)
                loss /= xr.world_size()
                return loss
            """,
            note="sum",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss, count):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                dist.all_reduce(count, dist.ReduceOp.AVG)
                return loss, count
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss, count):
                dist.init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                xm.all_reduce("sum", [count], scale=1.0 / xr.world_size())
                return loss, count
            """,
            note="all-reduce-statement",
            findings=(Expected(9, 5, "has no ReduceOp.AVG"), Expected(10, 5, "has no ReduceOp.AVG")),
        ),
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss, out):
                dist.init_process_group("nccl")
                work = dist.all_reduce(loss, op=dist.ReduceOp.AVG, async_op=True)
                dist.reduce_scatter_tensor(out, loss, op=dist.ReduceOp.AVG)
                return work
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def evaluate(loss, out):
                dist.init_process_group("xla", init_method="xla://")
                work = dist.all_reduce(loss, op=dist.ReduceOp.AVG, async_op=True)
                dist.reduce_scatter_tensor(out, loss, op=dist.ReduceOp.AVG)
                return work
            """,
            note="reported-where-not-a-plain-statement",
            findings=(Expected(7, 37, "refuses this reduce op"), Expected(8, 46, "refuses this reduce op")),
        ),
        invalid(
            """
            from torch.distributed import ReduceOp, all_reduce, init_process_group


            def evaluate(loss):
                init_process_group("nccl")
                all_reduce(tensor=loss, op=ReduceOp.AVG)
                return loss
            """,
            """
            from torch.distributed import init_process_group
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss):
                init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                return loss
            """,
            alias=True,
            note="from-import",
            findings=(Expected(9, 5, "has no ReduceOp.AVG"),),
        ),
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                return loss
            """,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def evaluate(loss):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                xm.all_reduce("sum", [loss], scale=1.0 / xm.xrt_world_size())
                return loss
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(11, 5, "has no ReduceOp.AVG"),),
        ),
    ),
)

IGNITE_BACKEND = Rule(
    code="XLA616",
    name="ignite-backend",
    severity="error",
    summary='PyTorch-Ignite launchers (idist.Parallel, idist.initialize, idist.spawn) use ignite\'s XLA backend "xla-tpu" '
    "(sagemaker); on torch_xla 2.9, where that backend cannot run, they are reported",
    fixable=True,
    why='The backend given to ignite\'s launcher decides where the processes train: with "nccl" or "gloo" they '
    "train on CUDA or the CPU over torch.distributed, and with no backend idist runs serially on CUDA or the CPU, "
    "so a converted script whose launcher was left alone never uses the XLA device. Ignite's XLA backend is "
    '"xla-tpu" (ignite/distributed/comp_models/xla.py); it reads ranks with xm.get_ordinal and '
    "xm.xrt_world_size, which torch_xla 2.7 removed, so for torch_xla 2.9 no backend name is right: every "
    "launcher is reported there, with what to use instead. A backend that is not a literal is reported.",
    examples=lambda: (
        invalid(
            """
            import ignite.distributed as idist


            def training(local_rank, config):
                model = idist.auto_model(build_model(config))


            with idist.Parallel(backend="nccl", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            """
            import ignite.distributed as idist


            def training(local_rank, config):
                model = idist.auto_model(build_model(config))


            with idist.Parallel(backend="xla-tpu", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            findings=(Expected(8, 29, 'ignite backend "nccl" -> "xla-tpu"'),),
        ),
        invalid(
            """
            import ignite.distributed as idist

            with idist.Parallel(backend="nccl", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            findings=(
                Expected(
                    3,
                    29,
                    'ignite\'s "xla-tpu" backend reads ranks with xm.get_ordinal and '
                    "xm.xrt_world_size, which torch_xla 2.7 removed",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import ignite.distributed as idist

            with idist.Parallel(backend="xla-tpu", nproc_per_node=8) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            note="already-xla-tpu",
        ),
        valid(
            """
            import torch
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=2, backend="loky")(delayed(torch.load)(p) for p in paths)
            """,
            target="sagemaker",
            note="not-ignite",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from ignite import distributed as dist

            with dist.Parallel("gloo", 2) as parallel:
                parallel.run(training, config)
            dist.initialize(backend='nccl')
            """,
            """
            from ignite import distributed as dist

            with dist.Parallel("xla-tpu", 2) as parallel:
                parallel.run(training, config)
            dist.initialize(backend='xla-tpu')
            """,
            target="sagemaker",
            alias=True,
            note="alias-positional-initialize",
            findings=(
                Expected(3, 20, 'ignite backend "gloo" -> "xla-tpu"'),
                Expected(5, 25, "ignite backend 'nccl' -> \"xla-tpu\""),
            ),
        ),
        invalid(
            """
            from ignite.distributed import Parallel, spawn

            spawn("nccl", training, (config,), nproc_per_node=2)
            with Parallel(backend=config["backend"]) as parallel:
                parallel.run(training, config)
            with Parallel(**dist_config) as parallel:
                parallel.run(training, config)
            with Parallel(backend=None) as parallel:
                parallel.run(training, config)
            """,
            """
            from ignite.distributed import Parallel, spawn

            spawn("xla-tpu", training, (config,), nproc_per_node=2)
            with Parallel(backend=config["backend"]) as parallel:
                parallel.run(training, config)
            with Parallel(**dist_config) as parallel:
                parallel.run(training, config)
            with Parallel(backend=None) as parallel:
                parallel.run(training, config)
            """,
            target="sagemaker",
            alias=True,
            note="from-import-not-literal-and-serial",
            findings=(
                Expected(3, 7, 'ignite backend "nccl" -> "xla-tpu"'),
                Expected(4, 23, 'ignite\'s backend comes from `config["backend"]`: make it "xla-tpu"'),
                Expected(6, 15, "ignite's backend comes from `**dist_config`"),
                Expected(8, 23, "with no backend idist runs the function in this one process"),
            ),
        ),
        invalid(
            """
            import ignite.distributed as idist

            idist.initialize("xla-tpu")
            with idist.Parallel() as parallel:
                parallel.run(training, config)
            """,
            note="2.9-xla-tpu-and-serial",
            findings=(
                Expected(3, 18, "torch_xla 2.7 removed, so on torch_xla 2.9 it fails at its first rank query"),
                Expected(4, 6, "with no backend idist runs the function in this one process"),
            ),
        ),
    ),
)

ITERABLE_DATASET_SHARDS = Rule(
    code="XLA617",
    name="iterable-dataset-shards",
    severity="warning",
    summary="A training DataLoader over an iterable-style data set gets no DistributedSampler: the data set must shard "
    "itself by process",
    fixable=False,
    why="A DataLoader over an IterableDataset refuses a sampler (`ValueError: DataLoader with IterableDataset: "
    "expected unspecified sampler option`; DistributedSampler itself raises `TypeError: object has no len()` "
    "first), so the tool adds none where the data set is iterable-style: a class of the file that derives from "
    "IterableDataset or only defines `__iter__`, `datasets.load_dataset(..., streaming=True)`, webdataset's "
    "pipelines, torchdata's iterable datapipes, a class of another module of the project that derives from "
    "IterableDataset. A data set whose class comes from a module of the project that the run cannot read (a "
    "run on one file) may be either kind: it gets no sampler either, and the finding says so. Without sharding, "
    "every process reads the whole stream: the "
    "replicas' gradients are averaged, so the model trains as one process would, without crashing or changing "
    "its results, but the processes buy no speed-up. That is a warning, not an error. The data set must hand "
    "each process its own share, using the XLA rank and world size: Hugging Face's "
    "`datasets.distributed.split_dataset_by_node`, webdataset's `split_by_node`, torchdata's "
    "`sharding_filter()`, or `itertools.islice` over the stream in your own `__iter__`.",
    examples=lambda: (
        invalid(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            def main():
                dist.init_process_group("nccl")
                loader = DataLoader(Stream(), batch_size=8)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            def main():
                dist.init_process_group("xla", init_method="xla://")
                loader = DataLoader(Stream(), batch_size=8)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            findings=(Expected(14, 14, "over an iterable-style data set (`Stream(...)`): it takes no sampler"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset


            class Records(Dataset):
                def __iter__(self):
                    yield from range(100)

                def __getitem__(self, index):
                    return read_record(index)

                def __len__(self):
                    return 100


            def main():
                dist.init_process_group("nccl")
                dataset = Records()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            class Records(Dataset):
                def __iter__(self):
                    yield from range(100)

                def __getitem__(self, index):
                    return read_record(index)

                def __len__(self):
                    return 100


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = Records()
                loader = DataLoader(dataset, batch_size=8, drop_last=True, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False))
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="map-style-data-set",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist
            import webdataset as wds
            from datasets import load_dataset as load
            from torch.utils.data import DataLoader


            def main():
                dist.init_process_group("nccl")
                stream = load("c4", "en", split="train", streaming=True).shuffle(seed=0)
                text = DataLoader(stream, batch_size=8, drop_last=True)
                shards = wds.WebDataset("data-{000..009}.tar").decode("torchrgb")
                images = DataLoader(shards, batch_size=8, drop_last=True)
                for x in text:
                    optimizer.step()
                for x in images:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            import webdataset as wds
            from datasets import load_dataset as load
            from torch.utils.data import DataLoader
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                stream = load("c4", "en", split="train", streaming=True).shuffle(seed=0)
                text = DataLoader(stream, batch_size=8, drop_last=True)
                shards = wds.WebDataset("data-{000..009}.tar").decode("torchrgb")
                images = DataLoader(shards, batch_size=8, drop_last=True)
                for x in text:
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
                for x in images:
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
            """,
            target="sagemaker",
            alias=True,
            note="streaming-and-webdataset-sagemaker",
            findings=(
                Expected(16, 12, "(`datasets.load_dataset(..., streaming=True)`): it takes no sampler"),
                Expected(18, 14, "(`webdataset.WebDataset(...)`): it takes no sampler"),
            ),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            class Shuffled(Stream):
                pass


            def main():
                dist.init_process_group("nccl")
                dataset = Shuffled()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            class Stream(IterableDataset):
                def __iter__(self):
                    yield from read_records()


            class Shuffled(Stream):
                pass


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = Shuffled()
                loader = DataLoader(dataset, batch_size=8, drop_last=True)
                for x, y in loader:
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="subclass-of-a-file-iterable",
            findings=(Expected(20, 14, "(`Shuffled(...)`): it takes no sampler"),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist
            from data.streams import TokenStream


            def main():
                dist.init_process_group("nccl")
                dataset = TokenStream(files)
                loader = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=True)
                for x in loader:
                    optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from data.streams import TokenStream


            def main():
                dist.init_process_group("xla", init_method="xla://")
                dataset = TokenStream(files)
                loader = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=True)
                for x in loader:
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            note="class-of-an-unread-module",
            findings=(
                Expected(11, 14, "over `TokenStream(...)`, a class of `data.streams`, which this run does not read"),
            ),
        ),
    ),
)

PROCESS_GROUP_FALLBACK = Rule(
    code="XLA618",
    name="process-group-fallback",
    severity="error",
    summary="A set-up whose `except` goes on without a process group, before an unconditional DistributedDataParallel, "
    "while its `try` can still fail on XLA",
    fixable=False,
    why="Set-up helpers often start the process group in a `try` and fall back to one process in the `except` "
    "(world size 1, no process group). If the script then wraps its model in DistributedDataParallel whatever "
    "happened, the fallback crashes: DDP raises `ValueError: Default process group has not been initialized`. "
    "The port starts the xla process group in every process torch_xla.launch starts (one process too: checked on "
    "torch_xla 2.9), so the fallback only runs where something in the `try` still fails on XLA: an environment "
    'variable read by subscript that the port leaves (`os.environ["MASTER_ADDR"]`; the XLA launcher sets '
    "none of torchrun's variables, so it raises KeyError). Read it with `os.environ.get(...)`, or drop it if "
    "nothing else needs it, or let the `except` re-raise, or wrap the model in DDP only when "
    "`dist.is_initialized()`. Where nothing in the `try` can fail after the port, nothing is reported.",
    examples=lambda: (
        invalid(
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel


            def setup():
                try:
                    address = os.environ["MASTER_ADDR"]
                    dist.init_process_group("nccl")
                    return dist.get_world_size()
                except KeyError:
                    return 1


            def main(model):
                world_size = setup()
                model = DistributedDataParallel(model)
            """,
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def setup():
                try:
                    address = os.environ["MASTER_ADDR"]
                    dist.init_process_group("xla", init_method="xla://")
                    return xr.world_size()
                except KeyError:
                    return 1


            def main(model):
                world_size = setup()
                model = DistributedDataParallel(model)
            """,
            findings=(Expected(14, 5, "if this `except` runs, the script goes on without a process group"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel


            def setup():
                try:
                    local_rank = int(os.environ["LOCAL_RANK"])
                    dist.init_process_group("nccl")
                    return dist.get_world_size()
                except KeyError:
                    print(f"process {os.getpid()}: one process")
                    return 1


            def main(model):
                world_size = setup()
                model = DistributedDataParallel(model)
            """,
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def setup():
                try:
                    local_rank = xr.local_ordinal()
                    dist.init_process_group("xla", init_method="xla://")
                    return xr.world_size()
                except KeyError:
                    print(f"process {os.getpid()}: one process")
                    return 1


            def main(model):
                world_size = setup()
                model = DistributedDataParallel(model)
            """,
            note="try-ported-whole",
        ),
        valid(
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel


            def setup():
                try:
                    address = os.environ["MASTER_ADDR"]
                    dist.init_process_group("nccl")
                    return dist.get_world_size()
                except KeyError:
                    return 1


            def main(model):
                if setup() > 1:
                    model = DistributedDataParallel(model)
            """,
            """
            import os

            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def setup():
                try:
                    address = os.environ["MASTER_ADDR"]
                    dist.init_process_group("xla", init_method="xla://")
                    return xr.world_size()
                except KeyError:
                    return 1


            def main(model):
                if setup() > 1:
                    model = DistributedDataParallel(model)
            """,
            note="ddp-guarded",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import os

            from torch.distributed import init_process_group as start
            from torch.nn.parallel import DistributedDataParallel as DDP


            def setup():
                try:
                    port = os.environ["MASTER_PORT"]
                    start(backend="nccl")
                except Exception:
                    print("one process")


            def main(model):
                setup()
                model = DDP(model)
            """,
            """
            import os

            from torch.distributed import init_process_group as start
            from torch.nn.parallel import DistributedDataParallel as DDP
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup():
                try:
                    port = os.environ["MASTER_PORT"]
                    os.environ.setdefault("MASTER_ADDR", "localhost")
                    os.environ.setdefault("MASTER_PORT", "12355")
                    start("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                except Exception:
                    print("one process")


            def main(model):
                setup()
                model = DDP(model)
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(15, 5, '`os.environ["MASTER_PORT"]` in the `try` raises KeyError'),),
        ),
    ),
)

RULES = (
    XLA_PROCESS_GROUP,
    XLA_RANKS,
    XLA_LAUNCH,
    DDP_DEVICE_IDS,
    DATA_PARALLEL,
    DISTRIBUTED_SAMPLER,
    AMP_GRADIENT_ALL_REDUCE,
    HOGWILD,
    DISTRIBUTED_MANUAL,
    MASTER_PRINT,
    MODULE_LEVEL_DISTRIBUTED,
    AVERAGE_ALL_REDUCE,
    IGNITE_BACKEND,
    ITERABLE_DATASET_SHARDS,
    PROCESS_GROUP_FALLBACK,
)
