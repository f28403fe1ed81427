"""XLA603 xla-launch."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
