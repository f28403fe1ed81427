"""XLA603's invalid cases: mp.spawn, torchrun-style main guards and old launchers started with the
target's launcher, kept apart from the rule so that its module holds the rule, its messages and
its hooks (the cases are most of its bulk)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

# An old xmp.spawn on the 2.9 target, and the launch it becomes.
OLD_SPAWN = """
    import torch_xla.distributed.xla_multiprocessing as xmp

    def _mp_fn(index, flags):
        pass

    if __name__ == "__main__":
        xmp.spawn(_mp_fn, args=({},), nprocs=8, start_method="fork")
"""
OLD_SPAWN_LAUNCHED = """
    import torch_xla

    def _mp_fn(index, flags):
        pass

    if __name__ == "__main__":
        torch_xla.launch(_mp_fn, args=({},), start_method="fork")
"""


def xla_launch_invalid() -> tuple[Invalid, ...]:
    return (
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
        # The distributed mode a --launcher flag picks (OpenMMLab's and BasicSR's scripts): its default
        # keeps every launched process non-distributed, which the finding says.
        invalid(
            """
            import argparse

            import torch


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--launcher", choices=["none", "pytorch", "slurm"], default="none")
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                distributed = args.launcher != "none"
                if distributed:
                    torch.distributed.init_process_group("nccl")
                model = torch.nn.Linear(2, 2)


            if __name__ == "__main__":
                main()
            """,
            """
            import argparse

            import torch
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--launcher", choices=["none", "pytorch", "slurm"], default="none")
                parser.add_argument("--local_rank", type=int, default=0)
                args = parser.parse_args()
                distributed = args.launcher != "none"
                if distributed:
                    torch.distributed.init_process_group("xla", init_method="xla://")
                model = torch.nn.Linear(2, 2)


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="launcher-flag-default-none",
            findings=(
                Expected(
                    18,
                    1,
                    "it runs in every process, started by torch_xla.launch(...); but `--launcher` (default none) "
                    "keeps the script non-distributed: with it, each process trains its own copy of the model, with "
                    "no gradient all-reduce, and all write the same outputs. Start one process (torch_xla.launch(..., "
                    "debug_single_process=True))",
                ),
            ),
        ),
        # A library object that reads its own rank (audiotools' Accelerator: LOCAL_RANK, else 0):
        # every launched process is its rank 0, which the finding says.
        invalid(
            """
            import os

            import argbind
            import torch
            from audiotools import ml

            Accelerator = argbind.bind(ml.Accelerator, without_prefix=True)

            if __name__ == "__main__":
                debug = int(os.getenv("LOCAL_RANK", 0)) == 0
                path = os.path.join("runs", "model.pth")
                with Accelerator() as accel:
                    model = accel.prepare_model(torch.nn.Linear(2, 2))
            """,
            """
            import os

            import argbind
            import torch
            import torch_xla
            import torch_xla.runtime as xr
            from audiotools import ml

            Accelerator = argbind.bind(ml.Accelerator, without_prefix=True)

            def _mp_fn(index):
                debug = xr.local_ordinal() == 0
                path = os.path.join("runs", "model.pth")
                with Accelerator() as accel:
                    model = accel.prepare_model(torch.nn.Linear(2, 2))


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="library-rank-from-local-rank",
            findings=(
                Expected(
                    11,
                    1,
                    "started by torch_xla.launch(...); but audiotools' Accelerator reads its rank from LOCAL_RANK, "
                    "which the XLA launcher does not set: every process acts as rank 0",
                ),
            ),
        ),
        invalid(
            """
            import os

            import torch
            from audiotools.ml import Accelerator as Acc

            if __name__ == "__main__":
                debug = int(os.getenv("LOCAL_RANK", 0)) == 0
                path = os.path.join("runs", "model.pth")
                with Acc() as accel:
                    model = accel.prepare_model(torch.nn.Linear(2, 2))
            """,
            """
            import os

            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_multiprocessing as xmp
            from audiotools.ml import Accelerator as Acc

            def _mp_fn(index):
                debug = xm.get_local_ordinal() == 0
                path = os.path.join("runs", "model.pth")
                with Acc() as accel:
                    model = accel.prepare_model(torch.nn.Linear(2, 2))


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            alias=True,
            note="library-rank-from-local-rank-alias-sagemaker",
            findings=(
                Expected(
                    8,
                    1,
                    "but audiotools' Accelerator reads its rank from LOCAL_RANK, which the XLA launcher does not "
                    "set: every process acts as rank 0, trains its own copy of the model with no gradient "
                    "all-reduce, and all write the same checkpoints and logs. Start one process "
                    "(torch_xla.distributed.xla_multiprocessing.spawn(..., nprocs=1)), or take the rank from the "
                    "XLA runtime (xm.get_ordinal())",
                ),
            ),
        ),
        # A process group the module starts as it is imported would start the XLA runtime in the
        # launching process: it moves into _mp_fn, first.
        invalid(
            """
            import torch.distributed as dist

            dist.init_process_group(backend="nccl")


            def main():
                pass


            if __name__ == "__main__":
                main()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                pass


            def _mp_fn(index):
                dist.init_process_group("xla", init_method="xla://")
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="process-group-at-import",
            findings=(
                Expected(9, 1, "the main guard's code -> def _mp_fn(index)"),
                Expected(10, 5, "moved dist.init_process_group(...) into def _mp_fn(index): at module level"),
            ),
        ),
        # On torch_xla 1.13 the env:// settings stay before it, at module level.
        invalid(
            """
            from torch.distributed import init_process_group as init_pg

            init_pg("nccl")


            def main():
                pass


            if __name__ == "__main__":
                main()
            """,
            """
            from torch.distributed import init_process_group as init_pg
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.distributed.xla_multiprocessing as xmp

            os.environ.setdefault("MASTER_ADDR", "localhost")
            os.environ.setdefault("MASTER_PORT", "12355")


            def main():
                pass


            def _mp_fn(index):
                init_pg("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                main()


            if __name__ == "__main__":
                xmp.spawn(_mp_fn, args=())
            """,
            target="sagemaker",
            alias=True,
            note="process-group-at-import-on-1.13",
            findings=(
                Expected(15, 1, "the main guard's code -> def _mp_fn(index)"),
                Expected(16, 5, "moved init_pg(...) into def _mp_fn(index): at module level"),
            ),
        ),
        # Under a check at module level it cannot move: reported.
        invalid(
            """
            import os
            import torch.distributed as dist

            if "RANK" in os.environ:
                dist.init_process_group("nccl")


            def main():
                pass


            if __name__ == "__main__":
                main()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            if True:
                dist.init_process_group("xla", init_method="xla://")


            def main():
                pass


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="process-group-at-import-under-a-check",
            findings=(
                Expected(
                    5,
                    5,
                    "dist.init_process_group(...): at module level it runs as the script is imported, in the "
                    "launching process too, and starts the XLA runtime there, which torch_xla.launch(...) then "
                    'refuses ("Runtime is already initialized"); call it in the function each process runs',
                ),
                Expected(12, 1, "the main guard's code -> def _mp_fn(index)"),
            ),
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
            OLD_SPAWN,
            OLD_SPAWN_LAUNCHED,
            note="old-xmp-spawn",
            findings=(Expected(7, 5, "xmp.spawn(...) -> torch_xla.launch"),),
        ),
        invalid(  # xmp.spawn(fn, args, nprocs, join, daemon, start_method): the sixth is the start method
            substituted(OLD_SPAWN, ('args=({},), nprocs=8, start_method="fork"', '({},), 8, True, False, "fork"')),
            OLD_SPAWN_LAUNCHED,
            note="old-xmp-spawn-positional",
            findings=(Expected(7, 5, "xmp.spawn(...) -> torch_xla.launch"),),
        ),
    )
