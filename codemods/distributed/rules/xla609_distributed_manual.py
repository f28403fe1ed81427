"""XLA609 distributed-manual."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
