"""XLA618 process-group-fallback: an ``except`` of a ``try`` that starts the process group and
goes on without one, before an unconditional DDP, while the ``try`` can still fail on XLA (the
distributed facts' ``group_fallbacks``), is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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
                    dist.init_process_group("xla")
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
                    dist.init_process_group("xla")
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
                    dist.init_process_group("xla")
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
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def setup():
                try:
                    port = os.environ["MASTER_PORT"]
                    start("xla")
                except Exception:
                    print("one process")


            def main(model):
                setup()
                model = DDP(model)
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(12, 5, '`os.environ["MASTER_PORT"]` in the `try` raises KeyError'),),
        ),
    ),
)


@reports_facts(PROCESS_GROUP_FALLBACK, nodes=lambda facts: facts.distributed.group_fallbacks)
def _report(ctx: Context[Facts], original: cst.ExceptHandler) -> str:
    failing, ddp = ctx.facts.distributed.group_fallbacks[original]
    return (
        f"if this `except` runs, the script goes on without a process group, and `{ctx.code(ddp.func)}(...)` "
        'then raises ValueError ("Default process group has not been initialized"). On XLA it can run: '
        f"`{ctx.code(failing)}` in the `try` raises KeyError when the XLA launcher starts the processes "
        "(it sets none of torchrun's variables). Read it with os.environ.get(...), or drop it if nothing else "
        "needs it, let the `except` re-raise, or wrap the model in DDP only when dist.is_initialized()"
    )
