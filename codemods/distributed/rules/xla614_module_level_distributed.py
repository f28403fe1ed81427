"""XLA614 module-level-distributed: a script whose distributed training runs at module level
under its own launcher check (the distributed facts' ``module_level_anchor``, with
``module_level_checked``) keeps it, reported as the rewrite leaves the module (without such a
check it is XLA609's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

MODULE_LEVEL_DISTRIBUTED = Rule(
    code="XLA614",
    name="module-level-distributed",
    severity="info",
    summary="Distributed training at module level stays one process under `python` and several under torchrun",
    fixable=False,
    why="A script that trains at module level (nanoGPT, build-nanogpt, llama2.c) has no function for "
    "`torch_xla.launch` to start, and wrapping the whole module would change what its globals mean. Its own "
    "check for a launcher (`ddp = int(os.environ.get('RANK', -1)) != -1`) therefore stays and keeps its "
    "meaning: run as `python train.py` it takes the one-device branch on the XLA device; run under "
    "`torchrun --nproc-per-node=N` (with PJRT_DEVICE set) each process joins the xla:// process group, "
    "which torch_xla supports since 2.1. CUDA assertions in the distributed branch are removed (XLA104). "
    "Folding the check to True instead would send a plain `python train.py` into the distributed branch, "
    "with no launcher to start it.",
    examples=lambda: (
        invalid(
            """
        import os
        import torch
        from torch.distributed import init_process_group

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            assert torch.cuda.is_available()
            init_process_group(backend="nccl")
        device = "cuda"
        """,
            """
        import os
        import torch
        from torch.distributed import init_process_group
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            init_process_group("xla", init_method="xla://")
        device = "xla"
        """,
            findings=(Expected(6, 7, "distributed training at module level stays under its launcher check"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import os
            import torch.distributed as dist


            def main():
                if int(os.environ.get("RANK", -1)) != -1:
                    dist.init_process_group(backend="nccl")


            if __name__ == "__main__":
                main()
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def main():
                if True:
                    dist.init_process_group("xla", init_method="xla://")


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                torch_xla.launch(_mp_fn, args=())
            """,
            note="a-function-the-launcher-starts",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import os
            import torch
            import torch.distributed as dist

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                assert torch.cuda.is_available(), "needs CUDA"
                dist.init_process_group(backend="nccl")
                rank = int(os.environ["RANK"])
            """,
            """
            import os
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                dist.init_process_group("xla", init_method="xla://")
                rank = xr.global_ordinal()
            """,
            note="check-kept",
            findings=(Expected(7, 7, "distributed training at module level stays under its launcher check"),),
        ),
        invalid(
            """
            import os as O
            from torch.distributed import init_process_group as setup

            if "LOCAL_RANK" in O.environ:
                setup("nccl")
            """,
            """
            import os as O
            from torch.distributed import init_process_group as setup
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            if "LOCAL_RANK" in O.environ:
                setup("xla", init_method="xla://")
            """,
            alias=True,
            findings=(Expected(5, 4, "distributed training at module level stays under its launcher check"),),
        ),
    ),
)


@on_facts(
    MODULE_LEVEL_DISTRIBUTED,
    nodes=lambda facts: (
        [facts.distributed.module_level_script]
        if facts.distributed.module_level_script is not None and facts.distributed.module_level_checked
        else []
    ),
)
def _report(ctx: Context[Facts], original: cst.Module, updated: cst.Module) -> cst.Module:
    ctx.report(
        MODULE_LEVEL_DISTRIBUTED,
        ctx.facts.distributed.module_level_anchor,
        "distributed training at module level stays under its launcher check: `python` runs it on "
        "one XLA device, and `torchrun --nproc-per-node=N` one process per device"
        + ctx.target.advice(apis.XLA_INIT_METHOD_NOTE),
    )
    return updated
