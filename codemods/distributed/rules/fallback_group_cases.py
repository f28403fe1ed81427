"""XLA601's cases of process groups started with env:// in a ``try`` that falls back to one process
(distributed/fallbacks.py): the env:// rendezvous stays where nothing starts the script with the XLA
launcher; where the port adds torch_xla.launch (a torchrun-style main guard) or the script starts
its processes with it, the group meets through xla://: the launcher sets no RANK or WORLD_SIZE, and
with env:// every process would fall back and train alone on all the data.  Kept apart from the
rule (its module's size)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

KEPT = "the env:// rendezvous stays, so that where no launcher sets RANK and WORLD_SIZE"
XLA_RENDEZVOUS = 'dist.init_process_group("xla", init_method="xla://"): the "xla" backend; rank and world size come'
# A helper that starts the process group with env:// and falls back to one process.
FALLBACK = """
import torch.distributed as dist


def init_distributed():
    try:
        dist.init_process_group(backend="nccl", init_method="env://")
        return True
    except:
        print("not distributed")
        return False
"""
# A torchrun-style main guard (the port starts it with the XLA launcher) around such a helper.
LAUNCHED_SCRIPT = (
    FALLBACK
    + """

def main():
    init_distributed()


if __name__ == "__main__":
    main()
"""
)
_IMPORT = "import torch.distributed as dist\n"
_XLA_BACKEND = 'import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)\n'
_ENV_GROUP = 'dist.init_process_group(backend="nccl", init_method="env://")'
# The helper ported where nothing starts the script with the XLA launcher: the "xla" backend, env:// kept.
_PORTED = ((_IMPORT, _IMPORT + _XLA_BACKEND), (_ENV_GROUP, 'dist.init_process_group("xla", init_method="env://")'))
_ALIASED = (("as dist\n", "as D\n"), ("dist.init_process_group(", "D.init_process_group("))


def _launched(launch: str) -> tuple[str, str]:
    """The main guard as the port leaves it: the script started with ``launch``."""
    guard = 'if __name__ == "__main__":\n'
    return (guard + "    main()\n", f"def _mp_fn(index):\n    main()\n\n\n{guard}    {launch}(_mp_fn, args=())\n")


def env_fallback_cases() -> tuple[Invalid, ...]:
    ported = substituted(FALLBACK, *_PORTED)
    return (
        invalid(FALLBACK, ported, note="env-fallback", findings=(Expected(7, 9, KEPT),)),
        invalid(FALLBACK, ported, note="env-fallback-sagemaker", target="sagemaker", findings=(Expected(7, 9, KEPT),)),
        invalid(
            substituted(FALLBACK, *_ALIASED),
            substituted(ported, *_ALIASED),
            note="env-fallback-alias",
            alias=True,
            findings=(Expected(7, 9, KEPT),),
        ),
        invalid(
            LAUNCHED_SCRIPT,
            substituted(
                LAUNCHED_SCRIPT,
                (_IMPORT, _IMPORT + _XLA_BACKEND),
                (_ENV_GROUP, 'dist.init_process_group("xla", init_method="xla://")'),
                _launched("torch_xla.launch"),
            ),
            note="env-fallback-launched-by-the-port",
            findings=(Expected(7, 9, XLA_RENDEZVOUS),),
        ),
        invalid(
            LAUNCHED_SCRIPT,
            substituted(
                LAUNCHED_SCRIPT,
                (
                    _IMPORT,
                    _IMPORT
                    + "import os\nimport torch_xla.core.xla_model as xm\n"
                    + _XLA_BACKEND
                    + "import torch_xla.distributed.xla_multiprocessing as xmp\n",
                ),
                (
                    _ENV_GROUP,
                    'os.environ.setdefault("MASTER_ADDR", "localhost")\n'
                    '        os.environ.setdefault("MASTER_PORT", "12355")\n'
                    '        dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())',
                ),
                _launched("xmp.spawn"),
            ),
            note="env-fallback-launched-by-the-port-sagemaker",
            target="sagemaker",
            findings=(Expected(12, 9, 'dist.init_process_group("xla", rank=xm.get_ordinal()'),),
        ),
        invalid(
            """
            import torch.distributed as D
            import torch_xla


            def _mp_fn(index):
                try:
                    D.init_process_group("nccl")
                except:
                    print("not distributed")


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn)
            """,
            """
            import torch.distributed as D
            import torch_xla
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def _mp_fn(index):
                try:
                    D.init_process_group("xla", init_method="xla://")
                except:
                    print("not distributed")


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn)
            """,
            note="env-fallback-launched-alias",
            alias=True,
            findings=(Expected(8, 9, 'D.init_process_group("xla", init_method="xla://")'),),
        ),
    )
