"""XLA610 master-print: ``if rank == 0: print(...)``, one print that only the master process
runs (the distributed facts' ``master_prints``), becomes ``xm.master_print(...)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

MASTER_PRINT = Rule(
    code="XLA610",
    name="master-print",
    severity="info",
    summary="A print under a check for the master process (`if rank == 0:`) becomes xm.master_print",
    fixable=True,
    why="xm.master_print prints on the master process only, which is what the check said; it is the AWS guide's "
    "spelling and leaves no rank test behind. A check on the local rank (once per host) is left as it is. "
    "xm.master_print's arguments are evaluated in every process before it checks the ordinal, so a print that "
    "reads a name the function binds only under a rank check (`if rank == 0: start = time.time()`) keeps its "
    "check: without it every other process would raise UnboundLocalError.",
    examples=lambda: (
        invalid(
            """
        import torch.distributed as dist


        def report(loss):
            dist.init_process_group("nccl")
            if dist.get_rank() == 0:
                print(f"loss {loss:.3f}")
        """,
            """
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def report(loss):
            dist.init_process_group("xla", init_method="xla://")
            xm.master_print(f"loss {loss:.3f}")
        """,
            findings=(Expected(8, 5, "`if dist.get_rank() == 0"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist


            def main(local_rank):
                dist.init_process_group("nccl")
                if local_rank == 0:
                    print("once per host")
                if dist.get_rank() == 0:
                    print("saving")
                    save()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main(local_rank):
                dist.init_process_group("xla", init_method="xla://")
                if local_rank == 0:
                    print("once per host")
                if xr.global_ordinal() == 0:
                    print("saving")
                    save()
            """,
            note="local-rank-or-more-than-a-print",
        ),
        valid(
            """
            import time

            import torch.distributed as dist


            def train(rank, world):
                dist.init_process_group("nccl", rank=rank, world_size=world)
                for epoch in range(3):
                    if rank == 0:
                        start = time.time()
                    step()
                    if rank == 0:
                        print("epoch took {}".format(time.time() - start))
            """,
            """
            import time

            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(rank, world):
                dist.init_process_group("xla", init_method="xla://")
                for epoch in range(3):
                    if rank == 0:
                        start = time.time()
                    step()
                    if rank == 0:
                        print("epoch took {}".format(time.time() - start))
            """,
            note="argument-bound-on-the-master-only",
        ),
        valid(
            """
            import time

            import torch.distributed as dist


            def train(rank, world):
                dist.init_process_group("nccl", rank=rank, world_size=world)
                for epoch in range(3):
                    if rank == 0:
                        start = time.time()
                    step()
                    if rank == 0:
                        print("epoch took {}".format(time.time() - start))
            """,
            """
            import time

            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(rank, world):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                for epoch in range(3):
                    if rank == 0:
                        start = time.time()
                    step()
                    if rank == 0:
                        print("epoch took {}".format(time.time() - start))
            """,
            target="sagemaker",
            note="argument-bound-on-the-master-only, sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def main():
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                if rank == 0:
                    print("starting", flush=True)
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
                xm.master_print("starting", flush=True)
            """,
            note="rank-variable",
            findings=(Expected(10, 5, "`if rank == 0"),),
        ),
        invalid(
            """
            import torch.distributed as D


            def main():
                D.init_process_group("nccl")
                master_process = D.get_rank() == 0
                if master_process:
                    print("hello")
            """,
            """
            import torch.distributed as D
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                D.init_process_group("xla", init_method="xla://")
                master_process = xr.global_ordinal() == 0
                xm.master_print("hello")
            """,
            note="master-flag",
            alias=True,
            findings=(Expected(10, 5, "`if master_process"),),
        ),
        invalid(
            """
            import time

            import torch.distributed as D


            def train(rank, world):
                D.init_process_group("nccl", rank=rank, world_size=world)
                for epoch in range(3):
                    start = time.time()
                    step()
                    if rank == 0:
                        print("epoch took {}".format(time.time() - start))
            """,
            """
            import time

            import torch.distributed as D
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(rank, world):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                D.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                for epoch in range(3):
                    start = time.time()
                    step()
                    xm.master_print("epoch took {}".format(time.time() - start))
            """,
            target="sagemaker",
            note="argument-bound-in-every-process, sagemaker",
            alias=True,
            findings=(Expected(16, 9, "its arguments are evaluated in every process"),),
        ),
    ),
)


@on_facts(MASTER_PRINT, nodes=lambda facts: facts.distributed.master_prints)
def _master_print(ctx: Context[Facts], original: cst.If, updated: cst.If) -> cst.BaseStatement:
    """``if rank == 0: print(...)`` -> ``xm.master_print(...)``."""
    import libcst as cst

    from codemods.engine.nodes import lone_call

    call = lone_call(updated.body.body[0]) if isinstance(updated.body, cst.IndentedBlock) else None
    if call is None or not (isinstance(call.func, cst.Name) and call.func.value == "print"):
        return updated  # another rewrite changed it (a step closure)

    def build() -> cst.SimpleStatementLine | None:
        master_print = ctx.replace_callee(call, call, "master_print")
        if master_print is None:
            return None
        return cst.SimpleStatementLine([cst.Expr(master_print)], leading_lines=updated.leading_lines)

    fixed = ctx.fix(
        MASTER_PRINT,
        original,
        f"`if {ctx.code(original.test)}: print(...)` -> {{new}}: prints on the master process only"
        " (its arguments are evaluated in every process)",
        build,
    )
    if fixed is None:
        return updated
    ctx.forget_removed(original.test, updated.test)
    return fixed
