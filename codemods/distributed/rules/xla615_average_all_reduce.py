"""XLA615 average-all-reduce: ``dist.all_reduce(t, op=dist.ReduceOp.AVG)`` (the distributed facts'
``average_reduces``; the xla process group has no AVG) becomes ``xm.all_reduce("sum", [t],
scale=1.0 / world size)``, and any other use of a reduce op it refuses
(``unsupported_reduce_ops``) is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

AVERAGE_ALL_REDUCE = Rule(
    code="XLA615",
    name="average-all-reduce",
    severity="error",
    summary="An all-reduce with ReduceOp.AVG becomes xm.all_reduce of the sum scaled by 1 / world size",
    fixable=True,
    why="torch_xla's xla process group maps SUM, PRODUCT, MIN, MAX, BAND and BOR to XLA's reductions and "
    "raises `ValueError: Invalid reduce op` for AVG (and PREMUL_SUM), so `dist.all_reduce(loss, "
    "op=dist.ReduceOp.AVG)` (build-nanogpt, nanoGPT's evaluation) crashes at its first call. xm.all_reduce "
    "with a list reduces in place, as dist.all_reduce does, and its scale makes the sum an average. A call "
    "with a group, async_op or its value used, and any other use of these ops, is reported.",
    examples=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def average(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                return loss
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def average(loss):
                dist.init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                return loss
            """,
            findings=(Expected(9, 5, "has no ReduceOp.AVG"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch.distributed as dist


            def evaluate(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.SUM)
                loss /= dist.get_world_size()
                return loss
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss):
                dist.init_process_group("xla", init_method="xla://")
                dist.all_reduce(loss, op=dist.ReduceOp.SUM)
                loss /= xr.world_size()
                return loss
            """,
            note="sum",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss, count):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                dist.all_reduce(count, dist.ReduceOp.AVG)
                return loss, count
            """,
            """
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss, count):
                dist.init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                xm.all_reduce("sum", [count], scale=1.0 / xr.world_size())
                return loss, count
            """,
            note="all-reduce-statement",
            findings=(Expected(9, 5, "has no ReduceOp.AVG"), Expected(10, 5, "has no ReduceOp.AVG")),
        ),
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss, out):
                dist.init_process_group("nccl")
                work = dist.all_reduce(loss, op=dist.ReduceOp.AVG, async_op=True)
                dist.reduce_scatter_tensor(out, loss, op=dist.ReduceOp.AVG)
                return work
            """,
            """
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def evaluate(loss, out):
                dist.init_process_group("xla", init_method="xla://")
                work = dist.all_reduce(loss, op=dist.ReduceOp.AVG, async_op=True)
                dist.reduce_scatter_tensor(out, loss, op=dist.ReduceOp.AVG)
                return work
            """,
            note="reported-where-not-a-plain-statement",
            findings=(Expected(7, 37, "refuses this reduce op"), Expected(8, 46, "refuses this reduce op")),
        ),
        invalid(
            """
            from torch.distributed import ReduceOp, all_reduce, init_process_group


            def evaluate(loss):
                init_process_group("nccl")
                all_reduce(tensor=loss, op=ReduceOp.AVG)
                return loss
            """,
            """
            from torch.distributed import init_process_group
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def evaluate(loss):
                init_process_group("xla", init_method="xla://")
                xm.all_reduce("sum", [loss], scale=1.0 / xr.world_size())
                return loss
            """,
            alias=True,
            note="from-import",
            findings=(Expected(9, 5, "has no ReduceOp.AVG"),),
        ),
        invalid(
            """
            import torch.distributed as dist


            def evaluate(loss):
                dist.init_process_group("nccl")
                dist.all_reduce(loss, op=dist.ReduceOp.AVG)
                return loss
            """,
            """
            import torch.distributed as dist
            import os
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def evaluate(loss):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                xm.all_reduce("sum", [loss], scale=1.0 / xm.xrt_world_size())
                return loss
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(11, 5, "has no ReduceOp.AVG"),),
        ),
    ),
)


@on_facts(AVERAGE_ALL_REDUCE, nodes=lambda facts: facts.distributed.average_reduces)
def _average_reduce(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    import libcst as cst

    from codemods.distributed.rules.edits import keyword_arg, replaced
    from codemods.engine.nodes import with_comma

    def build() -> cst.Call | None:
        reduce_ = ctx.imports.expression(ctx.target.api("all_reduce"))
        world = ctx.call("world_size")
        if reduce_ is None or world is None:
            return None
        tensor = next(
            a
            for i, a in enumerate(updated.args)
            if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "tensor")
        ).value
        scale = cst.BinaryOperation(cst.Float("1.0"), cst.Divide(), world)
        return cst.Call(
            reduce_,
            [
                with_comma(cst.Arg(cst.SimpleString('"sum"'))),
                with_comma(cst.Arg(cst.List([cst.Element(tensor)]))),
                keyword_arg("scale", scale),
            ],
        )

    return replaced(
        ctx,
        AVERAGE_ALL_REDUCE,
        original,
        updated,
        "the xla process group has no ReduceOp.AVG (ValueError: Invalid reduce op); "
        "the sum scaled by the world size is the same average, in place",
        build,
    )


@reports_facts(AVERAGE_ALL_REDUCE, nodes=lambda facts: facts.distributed.unsupported_reduce_ops)
def _unsupported_op(ctx: Context[Facts], original: cst.Attribute) -> str:
    return (
        f"`{ctx.code(original)}`: the xla process group refuses this "
        "reduce op (ValueError: Invalid reduce op); reduce with ReduceOp.SUM and divide by the "
        "world size, or " + ctx.target.advice('xm.all_reduce("sum", [t], scale=1.0 / xr.world_size())')
    )
