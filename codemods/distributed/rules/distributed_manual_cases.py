"""XLA609's invalid cases: multi-process code the tool reports for porting by hand, kept apart
from the rule so that its module holds the rule, its messages and its hooks (the cases are most
of its bulk)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def distributed_manual_invalid() -> tuple[Invalid, ...]:
    return (
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
        # An MPI job's set-up (mpiexec -n 8): a free port broadcast from rank 0. Under the XLA launcher each
        # process is an MPI world of its own, so each sets its own port and the rendezvous never meets.
        invalid(
            """
            import os
            import socket

            import torch.distributed as dist
            from mpi4py import MPI


            def setup_dist():
                comm = MPI.COMM_WORLD
                port = comm.bcast(_find_free_port(), root=0)
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group(backend="nccl", init_method="env://")


            def _find_free_port():
                with socket.socket() as s:
                    s.bind(("", 0))
                    return s.getsockname()[1]
            """,
            """
            import os
            import socket

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from mpi4py import MPI


            def setup_dist():
                comm = MPI.COMM_WORLD
                port = comm.bcast(_find_free_port(), root=0)
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group("xla", init_method="xla://")


            def _find_free_port():
                with socket.socket() as s:
                    s.bind(("", 0))
                    return s.getsockname()[1]
            """,
            note="a port broadcast over MPI",
            findings=(Expected(12, 5, "under torch_xla.launch its MPI broadcast makes nothing agree"),),
        ),
        invalid(
            """
            import os
            import socket

            import torch.distributed as dist
            from mpi4py import MPI


            def setup_dist():
                comm = MPI.COMM_WORLD
                port = comm.bcast(_find_free_port(), root=0)
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group(backend="nccl", init_method="env://")


            def _find_free_port():
                with socket.socket() as s:
                    s.bind(("", 0))
                    return s.getsockname()[1]
            """,
            """
            import os
            import socket

            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from mpi4py import MPI


            def setup_dist():
                comm = MPI.COMM_WORLD
                port = comm.bcast(_find_free_port(), root=0)
                os.environ["MASTER_PORT"] = str(port)
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())


            def _find_free_port():
                with socket.socket() as s:
                    s.bind(("", 0))
                    return s.getsockname()[1]
            """,
            target="sagemaker",
            note="a port broadcast over MPI, sagemaker",
            findings=(Expected(13, 5, "under xmp.spawn its MPI broadcast makes nothing agree"),),
        ),
        invalid(
            """
            from os import environ

            import torch.distributed as dist
            from mpi4py import MPI


            def setup(find_port):
                environ["MASTER_PORT"] = str(MPI.COMM_WORLD.bcast(find_port(), root=0))
                dist.init_process_group("nccl")
            """,
            """
            from os import environ

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from mpi4py import MPI


            def setup(find_port):
                environ["MASTER_PORT"] = str(MPI.COMM_WORLD.bcast(find_port(), root=0))
                dist.init_process_group("xla", init_method="xla://")
            """,
            alias=True,
            note="a port broadcast over MPI, environ imported by name",
            findings=(Expected(9, 5, "sets a port that each process computes for itself"),),
        ),
        invalid(
            """
            import os

            import torch.distributed as dist
            from helpers import find_free_port


            def setup(rank, world_size):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(find_free_port())
                dist.init_process_group("nccl", rank=rank, world_size=world_size)
            """,
            """
            import os

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            from helpers import find_free_port


            def setup(rank, world_size):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(find_free_port())
                dist.init_process_group("xla", init_method="xla://")
            """,
            note="a free port picked in each process",
            findings=(
                Expected(
                    10,
                    5,
                    '`os.environ["MASTER_PORT"] = str(find_free_port())` sets a port that each process computes '
                    "for itself: the process group's rendezvous builds its store from MASTER_PORT as each process "
                    "sees it, so processes with different ports never meet (with more than one device, "
                    "init_process_group waits until it times out). Drop the assignment (every process then uses "
                    "port 12355) or set one fixed port before torch_xla.launch",
                ),
            ),
        ),
        # DDP wraps the model only under a CUDA check that stays (False on XLA): the other path
        # trains without DDP, and nothing all-reduces the gradients across processes.
        invalid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP


            class TrainLoop:
                def __init__(self, model, device):
                    self.model = model
                    if torch.cuda.is_available():
                        self.ddp_model = DDP(self.model, device_ids=[device])
                    else:
                        self.ddp_model = self.model
            """,
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP


            class TrainLoop:
                def __init__(self, model, device):
                    self.model = model
                    if torch.cuda.is_available():
                        self.ddp_model = DDP(self.model)
                    else:
                        self.ddp_model = self.model
            """,
            note="ddp-under-a-kept-cuda-check",
            findings=(
                Expected(
                    9,
                    30,
                    "`DDP` wraps the model only under `torch.cuda.is_available()`, which stays and is False on an "
                    "XLA host after the port: there the other path runs, without DDP, so nothing all-reduces the "
                    "gradients across processes",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from torch.nn.parallel.distributed import DistributedDataParallel as Wrapper


            def wrap(model, rank):
                if th.cuda.is_available():
                    return Wrapper(model, device_ids=[rank], output_device=rank)
                return model
            """,
            """
            import torch as th
            from torch.nn.parallel.distributed import DistributedDataParallel as Wrapper


            def wrap(model, rank):
                if th.cuda.is_available():
                    return Wrapper(model)
                return model
            """,
            note="ddp-under-a-kept-cuda-check-aliased",
            alias=True,
            findings=(Expected(7, 16, "`Wrapper` wraps the model only under `th.cuda.is_available()`"),),
        ),
        # A prefix test of the device type (torchdistill's ``wrap_model``) is such a check too.
        invalid(
            """
            from torch.nn.parallel import DistributedDataParallel


            def wrap_model(model, device, distributed, device_ids):
                model.to(device)
                if device.type.startswith("cuda") and distributed:
                    model = DistributedDataParallel(model, device_ids=device_ids)
                return model
            """,
            """
            from torch.nn.parallel import DistributedDataParallel


            def wrap_model(model, device, distributed, device_ids):
                model.to(device)
                if device.type.startswith("cuda") and distributed:
                    model = DistributedDataParallel(model)
                return model
            """,
            note="ddp-under-a-prefix-test-of-the-device-type",
            findings=(
                Expected(
                    7,
                    17,
                    '`DistributedDataParallel` wraps the model only under `device.type.startswith("cuda")`, which '
                    "stays and is False on an XLA host after the port",
                ),
            ),
        ),
        # The process group starts only under a CUDA check that stays (False on XLA): no group
        # starts there, and a DDP built after it raises (or nothing reduces across the processes).
        invalid(
            """
            import os

            import torch
            import torch.distributed as dist


            def setup(rank):
                if "WORLD_SIZE" in os.environ and torch.cuda.is_available():
                    dist.init_process_group("nccl")
            """,
            """
            import os

            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(rank):
                if "WORLD_SIZE" in os.environ and torch.cuda.is_available():
                    dist.init_process_group("xla", init_method="xla://")
            """,
            note="process-group-under-a-kept-cuda-check",
            findings=(
                Expected(
                    9,
                    39,
                    "`torch.cuda.is_available()` stays and is False on an XLA host after the port, and the process "
                    "group starts only under it (`dist.init_process_group(...)`): there no process group starts",
                ),
            ),
        ),
        invalid(
            """
            import torch as th
            from torch.distributed import init_process_group as start


            def setup(rank):
                if th.cuda.is_available():
                    start(backend="nccl")
            """,
            """
            import torch as th
            from torch.distributed import init_process_group as start
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup(rank):
                if th.cuda.is_available():
                    os.environ.setdefault("MASTER_ADDR", "localhost")
                    os.environ.setdefault("MASTER_PORT", "12355")
                    start("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
            """,
            note="process-group-under-a-kept-cuda-check-aliased",
            target="sagemaker",
            alias=True,
            findings=(Expected(9, 8, "`th.cuda.is_available()` stays and is False on an XLA host after the port"),),
        ),
    )
