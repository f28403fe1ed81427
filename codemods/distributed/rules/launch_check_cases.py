"""XLA602's cases about a script's own check that a launcher started it (``args.local_rank == -1``,
``assert "LOCAL_RANK" in os.environ``): every process is started by the XLA launcher, so the
check becomes True or False and its asserts go."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

# A --local_rank flag whose -1 asks whether a launcher started the script: one input for the cases of both targets, whose outputs differ.
LOCAL_RANK_FLAG_MINUS_ONE = """
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
"""


def launch_check_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            LOCAL_RANK_FLAG_MINUS_ONE,
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
            LOCAL_RANK_FLAG_MINUS_ONE,
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
    )
