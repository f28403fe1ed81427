"""XLA602's cases about rank flags: a ``--local_rank`` flag (also under another option's dest,
``add_argument("--rank", "--local_rank")``) becomes the runtime's local ordinal; a ``--rank``
flag of its own, read in the processes torch_xla starts, is an error there."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def rank_flag_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--rank", "--local_rank", type=int, default=0)
            args = parser.parse_args()
            args.rank = args.node_rank * args.gpus + args.rank
            print(args.rank)
            """,
            target="sagemaker",
            note="a-local-rank-flags-dest-the-script-computes-itself",
        ),
        valid(
            """
            import argparse

            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--rank", type=int, default=0)
            args = parser.parse_args()
            print(args.rank)
            """,
            note="a-rank-flag-that-is-no-local-rank",
        ),
        valid(
            """
            import argparse

            import torch.distributed as dist
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401
            import torch_xla.runtime as xr
            from torch.utils.data.distributed import DistributedSampler


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--rank", type=int, default=0)
                args = parser.parse_args()
                dist.init_process_group("xla", init_method="xla://")
                sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
                print("started with --rank", args.rank)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="a-rank-flag-only-printed-in-the-launched-processes",
        ),
        *(
            valid(
                _FLAG_TESTED_FOR_NONE_AT_MODULE_LEVEL,
                after,
                target=target,
                note=f"a-none-test-of-the-flag-stays-{target}",
            )
            for target, after in (("2.9", _MODULE_LEVEL_PORTED), ("sagemaker", _MODULE_LEVEL_PORTED_1_13))
        ),
    )


def rank_flag_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--rank", type=int, default=0)
                args = parser.parse_args()
                dist.init_process_group("nccl")
                sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=args.rank)


            if __name__ == "__main__":
                main()
            """,
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--rank", type=int, default=0)
                args = parser.parse_args()
                dist.init_process_group("xla", init_method="xla://")
                sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=args.rank)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="a-rank-flag-read-in-the-launched-processes",
            findings=(
                Expected(13, 56, "dist.get_world_size() -> xr.world_size()"),
                Expected(13, 78, "`args.rank` is the `--rank` flag, which torch_xla's launcher does not set"),
            ),
        ),
        invalid(
            """
            from argparse import ArgumentParser as Parser

            import torch.distributed as dist


            def run(opts):
                dist.init_process_group("nccl", rank=opts.rank, world_size=opts.world_size)
                if opts.rank == 0:
                    write_summary()


            if __name__ == "__main__":
                p = Parser()
                p.add_argument("--rank", type=int, default=0)
                p.add_argument("--world_size", type=int, default=1)
                run(p.parse_args())
            """,
            """
            from argparse import ArgumentParser as Parser

            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp


            def run(opts):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                if opts.rank == 0:
                    write_summary()


            def _mp_fn(index):
                p = Parser()
                p.add_argument("--rank", type=int, default=0)
                p.add_argument("--world_size", type=int, default=1)
                run(p.parse_args())


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            alias=True,
            note="a-rank-flag-through-an-aliased-parser",
            findings=(Expected(14, 8, "read the rank from the XLA runtime (xm.get_ordinal())"),),
        ),
        invalid(
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--rank", "--local_rank", default=0, type=int)
                args = parser.parse_args()
                dist.init_process_group(backend="nccl")
                sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=args.rank, shuffle=True)


            if __name__ == "__main__":
                main()
            """,
            """
            import argparse
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--rank", "--local_rank", default=0, type=int)
                args = parser.parse_args()
                dist.init_process_group("xla", init_method="xla://")
                sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.local_ordinal(), shuffle=True)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="a-local-rank-flag-read-by-its-dest",
            findings=(
                Expected(13, 56, "dist.get_world_size() -> xr.world_size()"),
                Expected(13, 78, "args.rank -> xr.local_ordinal(): the local rank from the XLA runtime"),
            ),
        ),
        invalid(
            """
            from argparse import ArgumentParser

            import torch

            ap = ArgumentParser()
            ap.add_argument("--rank", "--local-rank", type=int, default=0)
            opts = ap.parse_args()
            torch.cuda.set_device(opts.rank)
            shard = samples[opts.rank :: torch.cuda.device_count()]
            """,
            """
            from argparse import ArgumentParser

            import torch
            import torch_xla.core.xla_model as xm

            ap = ArgumentParser()
            ap.add_argument("--rank", "--local-rank", type=int, default=0)
            opts = ap.parse_args()
            shard = samples[xm.get_local_ordinal() :: xm.xrt_world_size()]
            """,
            target="sagemaker",
            alias=True,
            note="a-hyphenated-local-rank-alias",
            findings=(
                Expected(9, 17, "opts.rank -> xm.get_local_ordinal()"),
                Expected(9, 43, "torch.cuda.device_count() -> xm.xrt_world_size()"),
            ),
        ),
        *(
            invalid(
                _FLAG_TESTED_FOR_NONE,
                after,
                target=target,
                note=f"a-none-test-of-the-flag-is-a-launch-check-{target}",
                findings=(
                    Expected(line, 8, "args.local_rank is not None -> True: every process is started by the XLA"),
                    Expected(saved, 42, '`ckpt["Args"].local_rank is not None` tests a --local_rank flag that'),
                ),
            )
            for target, after, line, saved in (
                ("2.9", _FLAG_TESTED_FOR_NONE_PORTED, 13, 17),
                ("sagemaker", _FLAG_TESTED_FOR_NONE_PORTED_1_13, 16, 22),
            )
        ),
    )


# ``args.local_rank is not None`` (a --local_rank flag without default) tells a launched run, as
# ``!= -1`` does: a launch check, never ``xr.local_ordinal() is not None`` (an int: always true).
# A resumed checkpoint's saved flag, tested the same way, keeps None under the XLA launcher.
_FLAG_TESTED_FOR_NONE = """
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int)
    parser.add_argument("--resume")
    args = parser.parse_args()
    if args.local_rank is not None:
        dist.init_process_group("nccl")
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        assert dist.is_initialized() == (ckpt["Args"].local_rank is not None)


if __name__ == "__main__":
    main()
"""

_FLAG_TESTED_FOR_NONE_PORTED = """
import argparse

import torch
import torch.distributed as dist
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int)
    parser.add_argument("--resume")
    args = parser.parse_args()
    if True:
        dist.init_process_group("xla", init_method="xla://")
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        assert dist.is_initialized() == (ckpt["Args"].local_rank is not None)


def _mp_fn(index):
    main()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
"""

_FLAG_TESTED_FOR_NONE_PORTED_1_13 = """
import argparse

import torch
import torch.distributed as dist
import os
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int)
    parser.add_argument("--resume")
    args = parser.parse_args()
    if True:
        os.environ.setdefault("MASTER_ADDR", "localhost")
        os.environ.setdefault("MASTER_PORT", "12355")
        dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        assert dist.is_initialized() == (ckpt["Args"].local_rank is not None)


def _mp_fn(index):
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
"""

# At module level the launch check stays (python: one device; torchrun: one process per device).
_FLAG_TESTED_FOR_NONE_AT_MODULE_LEVEL = """
import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int)
args = parser.parse_args()
if args.local_rank is not None:
    dist.init_process_group("nccl")
"""

_MODULE_LEVEL_PORTED = """
import argparse

import torch.distributed as dist
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int)
args = parser.parse_args()
if args.local_rank is not None:
    dist.init_process_group("xla", init_method="xla://")
"""

_MODULE_LEVEL_PORTED_1_13 = """
import argparse

import torch.distributed as dist
import os
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int)
args = parser.parse_args()
if args.local_rank is not None:
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
"""
