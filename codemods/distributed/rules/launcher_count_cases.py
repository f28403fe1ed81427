"""XLA602's cases about CUDA device counts that the launching process hands to its workers
(which read the XLA count again at their start), and where it still uses them itself."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

_PRINTED_COUNT = """
    import torch
    import torch.multiprocessing as mp

    def train(rank, world_size):
        pass

    if __name__ == "__main__":
        print("GPUs:", torch.cuda.device_count())
        world_size = torch.cuda.device_count()
        mp.spawn(train, args=(world_size,), nprocs=world_size)
    """


# Uses of the device count that the port leaves nowhere to go: one input for the cases of both targets, whose outputs differ.
COUNT_THE_PORT_LEAVES_NOWHERE_TO_GO = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    dist.init_process_group("nccl", world_size=args.world_size, rank=args.rank)


def main(args):
    args.distributed = args.world_size > 1
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        worker(0, ngpus_per_node, args)
"""


def launcher_count_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _PRINTED_COUNT,
            """
            import torch
            import torch_xla
            import torch_xla.runtime as xr

            def train(rank, world_size):
                world_size = xr.world_size()
                pass

            if __name__ == "__main__":
                print("GPUs:", torch.cuda.device_count())
                world_size = torch.cuda.device_count()
                torch_xla.launch(train, args=(world_size,))
            """,
            note="a-printed-count-stays-in-the-launching-process",
            findings=(Expected(5, 1, "`world_size` read from the XLA runtime when `train` starts"),),
        ),
        invalid(
            _PRINTED_COUNT,
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp

            def train(rank, world_size):
                world_size = xm.xrt_world_size()
                pass

            def _mp_fn(index):
                print("GPUs:", torch.cuda.device_count())
                world_size = xm.xrt_world_size()
                train(index, world_size)


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            note="a-printed-count-stays-printed-in-the-ports-mp-fn-sagemaker",
            findings=(
                Expected(5, 1, "`world_size` read from the XLA runtime when `train` starts"),
                Expected(11, 18, "torch.cuda.device_count() -> xm.xrt_world_size(): the world size"),
            ),
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
        # Linted again after the port: the count the launcher hands the worker goes nowhere (the worker
        # sets it again first), so only the launching process's own use stays reported, at the same line.
        invalid(
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
            note="count-also-used-by-launcher-linted-after-the-port",
            target_only=True,
            findings=(Expected(11, 16, "the launching process still sees 0"),),
        ),
        invalid(
            """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp

            def train(rank, world_size, lr):
                world_size = xm.xrt_world_size()
                pass

            if __name__ == "__main__":
                world_size = torch.cuda.device_count()
                lr = 0.1 * world_size
                xmp.spawn(train, args=(world_size, lr))
            """,
            target="sagemaker",
            note="count-also-used-by-launcher-handed-to-a-worker-that-reads-it-again-sagemaker",
            findings=(Expected(11, 16, "the launching process still sees 0"),),
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
            COUNT_THE_PORT_LEAVES_NOWHERE_TO_GO,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xr.local_process_count()
                args.rank = xr.global_ordinal()
                dist.init_process_group("xla", init_method="xla://")


            def main(args):
                args.distributed = args.world_size > 1
                ngpus_per_node = torch.cuda.device_count()
                if args.multiprocessing:
                    args.world_size = ngpus_per_node * args.world_size
                    torch_xla.launch(worker, args=(ngpus_per_node, args))
                else:
                    worker(0, ngpus_per_node, args)
            """,
            note="count-uses-the-port-leaves-nowhere-to-go",
            findings=(
                Expected(7, 1, "`ngpus_per_node` read from the XLA runtime when `worker` starts"),
                Expected(9, 17, "args.rank * ngpus_per_node + gpu -> xr.global_ordinal()"),
            ),
        ),
        invalid(
            COUNT_THE_PORT_LEAVES_NOWHERE_TO_GO,
            """
            import torch
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp


            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xm.xrt_world_size()
                args.rank = xm.get_ordinal()
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())


            def main(args):
                args.distributed = args.world_size > 1
                ngpus_per_node = torch.cuda.device_count()
                if args.multiprocessing:
                    args.world_size = ngpus_per_node * args.world_size
                    xmp.spawn(worker, args=(ngpus_per_node, args))
                else:
                    worker(0, ngpus_per_node, args)
            """,
            target="sagemaker",
            note="count-uses-the-port-leaves-nowhere-to-go-sagemaker",
            findings=(
                Expected(9, 1, "`ngpus_per_node` read from the XLA runtime when `worker` starts"),
                Expected(11, 17, "args.rank * ngpus_per_node + gpu -> xm.get_ordinal()"),
            ),
        ),
        invalid(
            """
            import torch.distributed as dist
            import torch.multiprocessing
            from torch.cuda import device_count as n_devices


            def worker(gpu, ngpus_per_node, args):
                dist.init_process_group("nccl", world_size=args.world_size, rank=gpu)


            def main(args):
                ngpus_per_node = n_devices()
                args.world_size = ngpus_per_node * args.world_size
                torch.multiprocessing.spawn(worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
            """,
            """
            import torch.distributed as dist
            import torch.multiprocessing
            from torch.cuda import device_count as n_devices
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xr.local_process_count()
                dist.init_process_group("xla", init_method="xla://")


            def main(args):
                ngpus_per_node = n_devices()
                args.world_size = ngpus_per_node * args.world_size
                torch_xla.launch(worker, args=(ngpus_per_node, args))
            """,
            note="count-stored-for-a-dropped-argument-alias",
            alias=True,
            findings=(Expected(8, 1, "`ngpus_per_node` read from the XLA runtime when `worker` starts"),),
        ),
        invalid(
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp


            def worker(gpu, ngpus_per_node, args):
                dist.init_process_group("nccl", world_size=args.world_size, rank=gpu)
                return args.lr * args.world_size


            def main(args):
                ngpus_per_node = torch.cuda.device_count()
                args.world_size = ngpus_per_node * args.world_size
                mp.spawn(worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def worker(gpu, ngpus_per_node, args):
                ngpus_per_node = xr.local_process_count()
                dist.init_process_group("xla", init_method="xla://")
                return args.lr * args.world_size


            def main(args):
                ngpus_per_node = torch.cuda.device_count()
                args.world_size = ngpus_per_node * args.world_size
                torch_xla.launch(worker, args=(ngpus_per_node, args))
            """,
            note="count-stored-and-read-by-the-workers",
            findings=(
                Expected(7, 1, "`ngpus_per_node` read from the XLA runtime when `worker` starts"),
                Expected(15, 23, "the launching process still sees 0"),
            ),
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
    )
