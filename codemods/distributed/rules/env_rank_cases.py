"""XLA603's cases for a script whose rank comes from the launcher's variables in a way the rank
rules leave (a loop over the names of several launchers' variables): torch_xla.launch sets none
of them, so the finding says every launched process takes rank 0 of a world of 1."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

# A helper that reads the rank of whichever launcher started the run (SLURM's srun or torchrun).
WORLD_INFO = """
    import os

    import torch
    import torch.distributed as dist


    def world_info():
        rank, world_size = 0, 1
        for v in ("SLURM_PROCID", "RANK"):
            if v in os.environ:
                rank = int(os.environ[v])
                break
        for v in ("SLURM_NTASKS", "WORLD_SIZE"):
            if v in os.environ:
                world_size = int(os.environ[v])
                break
        return rank, world_size


    def main():
        rank, world_size = world_info()
        if world_size > 1:
            dist.init_process_group("nccl")
        model = torch.nn.Linear(2, 2).cuda()


    if __name__ == "__main__":
        main()
"""

LAUNCHED_29 = substituted(
    WORLD_INFO,
    (
        "import torch.distributed as dist\n",
        "import torch.distributed as dist\n"
        '    import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n',
    ),
    ('dist.init_process_group("nccl")', 'dist.init_process_group("xla", init_method="xla://")'),
    (".cuda()", ".to(torch_xla.device())"),
    (
        '    if __name__ == "__main__":\n        main()',
        '    def _mp_fn(index):\n        main()\n\n\n    if __name__ == "__main__":\n        torch_xla.launch(_mp_fn, args=())',
    ),
)

LAUNCHED_SAGEMAKER = substituted(
    WORLD_INFO,
    (
        "import torch.distributed as dist\n",
        "import torch.distributed as dist\n"
        "    import torch_xla.core.xla_model as xm\n"
        '    import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n'
        "    import torch_xla.distributed.xla_multiprocessing as xmp\n",
    ),
    (
        '            dist.init_process_group("nccl")',
        '            os.environ.setdefault("MASTER_ADDR", "localhost")\n'
        '            os.environ.setdefault("MASTER_PORT", "12355")\n'
        '            dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())',
    ),
    (".cuda()", ".to(xm.xla_device())"),
    (
        '    if __name__ == "__main__":\n        main()',
        '    def _mp_fn(index):\n        main()\n\n\n    if __name__ == "__main__":\n        xmp.spawn(_mp_fn, args=())',
    ),
)


def _aliased(program: str) -> str:
    """The same through ``import os as system``."""
    return program.replace("import os\n", "import os as system\n").replace("os.environ", "system.environ")


NOTE_29 = (
    "torch_xla.launch(...); but the rank or world size comes from variables torch_xla.launch does not set "
    "(`world_info` (this file) reads RANK, WORLD_SIZE): every process gets rank 0 of a world of 1 (no distributed "
    "setup, each process the master), trains on all the data and writes the same checkpoints and logs. Take the "
    "rank from xr.global_ordinal(), the local rank from xr.local_ordinal() and the world size from xr.world_size() "
    "there"
)
NOTE_SAGEMAKER = (
    "but the rank or world size comes from variables xmp.spawn does not set (`world_info` (this file) reads RANK, "
    "WORLD_SIZE): every process gets rank 0 of a world of 1 (no distributed setup, each process the master), "
    "trains on all the data and writes the same checkpoints and logs. Take the rank from xm.get_ordinal(), the "
    "local rank from xm.get_local_ordinal() and the world size from xm.xrt_world_size() there"
)


def env_rank_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            WORLD_INFO,
            LAUNCHED_29,
            note="rank-from-a-loop-over-launcher-variables",
            findings=(Expected(28, 1, NOTE_29),),
        ),
        invalid(
            WORLD_INFO,
            LAUNCHED_SAGEMAKER,
            target="sagemaker",
            note="rank-from-a-loop-over-launcher-variables-on-1.13",
            findings=(Expected(32, 1, NOTE_SAGEMAKER),),
        ),
        invalid(
            _aliased(WORLD_INFO),
            _aliased(LAUNCHED_29),
            alias=True,
            note="rank-from-a-loop-over-launcher-variables-os-aliased",
            findings=(Expected(28, 1, NOTE_29),),
        ),
        invalid(
            _aliased(WORLD_INFO),
            _aliased(LAUNCHED_SAGEMAKER),
            target="sagemaker",
            alias=True,
            note="rank-from-a-loop-over-launcher-variables-os-aliased-on-1.13",
            findings=(Expected(32, 1, NOTE_SAGEMAKER),),
        ),
        # Linted again after the port (a pre-commit hook over the converted tree): the launch is there,
        # the variables are still read, and the same line says so (no fix left to make).
        invalid(
            LAUNCHED_29,
            note="rank-from-launcher-variables-linted-after-the-port",
            findings=(Expected(28, 1, NOTE_29),),
        ),
        invalid(
            LAUNCHED_SAGEMAKER,
            target="sagemaker",
            note="rank-from-launcher-variables-linted-after-the-port-on-1.13",
            findings=(Expected(32, 1, NOTE_SAGEMAKER),),
        ),
        invalid(
            _aliased(LAUNCHED_29),
            alias=True,
            note="rank-from-launcher-variables-linted-after-the-port-os-aliased",
            findings=(Expected(28, 1, NOTE_29),),
        ),
    )
