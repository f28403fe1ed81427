"""XLA606 distributed-sampler: training data is split by a DistributedSampler from the XLA world
size and rank.  Its hooks give a DistributedSampler built without them its ``num_replicas`` and
``rank`` (the distributed facts' ``samplers``), give a training DataLoader one
(``sampler_plans``; without a data set it can name, it is reported), and make each epoch loop
reshuffle it (``set_epochs``: the loops)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.targets import Api

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DISTRIBUTED_SAMPLER = Rule(
    code="XLA606",
    name="distributed-sampler",
    severity="error",
    summary="Training data is split by a DistributedSampler built from the XLA world size and rank, reshuffled each epoch",
    fixable=True,
    why="Without it every process trains on the same batches; a sampler that asks the default process group "
    "for its rank is given the XLA runtime's instead.",
    examples=lambda: (
        invalid(
            """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler


        def data(dataset):
            dist.init_process_group("nccl")
            return DistributedSampler(dataset)
        """,
            """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def data(dataset):
            dist.init_process_group("xla", init_method="xla://")
            return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
        """,
            findings=(Expected(9, 12, "DistributedSampler"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=8, shuffle=True)
            """,
            note="one-device-loader",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader


            def main():
                dist.init_process_group("nccl")
                loader = DataLoader(dataset, batch_size=8, shuffle=True)
                for epoch in range(3):
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        optimizer.step()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def main():
                dist.init_process_group("xla", init_method="xla://")
                loader = DataLoader(dataset, batch_size=8, shuffle=False, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))
                for epoch in range(3):
                    loader.sampler.set_epoch(epoch)
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        xm.optimizer_step(optimizer)
                        torch_xla.sync()
            """,
            note="loader-gets-sampler",
            findings=(
                Expected(11, 14, "training DataLoader"),
                Expected(12, 5, "loader.sampler.set_epoch(epoch) each epoch"),
            ),
        ),
        invalid(
            """
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler as DS

            dist.init_process_group("nccl")
            sampler = DS(dataset, shuffle=True)
            """,
            """
            import torch.distributed as dist
            from torch.utils.data.distributed import DistributedSampler as DS
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr

            dist.init_process_group("xla", init_method="xla://")
            sampler = DS(dataset, shuffle=True, num_replicas=xr.world_size(), rank=xr.global_ordinal())
            """,
            note="sampler-alias",
            alias=True,
            findings=(Expected(7, 11, "DS: num_replicas and rank from the XLA runtime"),),
        ),
    ),
)

# The sampler the port builds.
SAMPLER = Api("torch.utils.data.distributed", "DistributedSampler")


@on_facts(DISTRIBUTED_SAMPLER, nodes=lambda facts: facts.distributed.samplers)
def _sampler_ranks(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.engine.nodes import with_keyword

    missing = ctx.facts.distributed.samplers[original]

    def build() -> cst.Call | None:
        args = list(updated.args)
        for keyword in missing:
            call = ctx.call("world_size" if keyword == "num_replicas" else "global_ordinal")
            if call is None:
                return None
            args = with_keyword(args, keyword, call)
        return updated.with_changes(args=args)

    return ctx.fix_or_keep(
        updated,
        DISTRIBUTED_SAMPLER,
        original,
        f"{ctx.code(original.func)}: {' and '.join(missing)} from the XLA runtime",
        build,
    )


@on_facts(DISTRIBUTED_SAMPLER, nodes=lambda facts: facts.distributed.sampler_plans)
def _loader_sampler(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    import libcst as cst

    from codemods.distributed.rules.edits import new_value
    from codemods.engine.nodes import counterpart, parse_dotted, with_keyword

    plan = ctx.facts.distributed.sampler_plans[original]
    dataset = plan.dataset
    if dataset is None or any(arg.star for arg in original.args):
        # Unpacked arguments may hold a shuffle=True, which a sampler excludes.
        ctx.report(
            DISTRIBUTED_SAMPLER,
            original,
            "training DataLoader without a DistributedSampler: give it "
            "`sampler=DistributedSampler(dataset, num_replicas=<world size>, rank=<global rank>)`, "
            "or every process trains on the same data",
        )
        return updated

    def build() -> cst.Call | None:
        sampler = ctx.imports.call(SAMPLER, [cst.Arg(parse_dotted(dataset))])
        world, rank = ctx.call("world_size"), ctx.call("global_ordinal")
        if sampler is None or world is None or rank is None:
            return None
        sampler_args = with_keyword(with_keyword(list(sampler.args), "num_replicas", world), "rank", rank)
        shuffle = new_value(original, updated, plan.shuffle.value) if plan.shuffle is not None else cst.Name("False")
        sampler_args = with_keyword(sampler_args, "shuffle", shuffle)
        args = list(updated.args)
        if plan.shuffle is not None and (shuffled := counterpart(original, updated, plan.shuffle)) is not None:
            index = args.index(shuffled)
            args[index] = shuffled.with_changes(value=cst.Name("False"))
        return updated.with_changes(args=with_keyword(args, "sampler", sampler.with_changes(args=sampler_args)))

    return ctx.fix_or_keep(
        updated,
        DISTRIBUTED_SAMPLER,
        original,
        "training DataLoader: a DistributedSampler from the XLA world size and rank gives each process its "
        "share of the data (the loader's shuffle moves to the sampler)",
        build,
    )


@on_facts(DISTRIBUTED_SAMPLER, nodes=lambda facts: of_types(facts.distributed.set_epochs, "For"))
def _set_epoch(ctx: Context[Facts], original: cst.For, updated: cst.For) -> cst.For:
    """``loader.sampler.set_epoch(epoch)`` first in each epoch of the loop."""
    import libcst as cst

    loader, epoch = ctx.facts.distributed.set_epochs[original]
    body = updated.body
    if not isinstance(body, cst.IndentedBlock):
        return updated

    def build() -> cst.For:
        call = cst.parse_statement(f"{loader}.sampler.set_epoch({epoch})\n")
        return updated.with_changes(body=body.with_changes(body=[call, *body.body]))

    return ctx.fix_or_keep(
        updated,
        DISTRIBUTED_SAMPLER,
        original,
        f"{loader}.sampler.set_epoch({epoch}) each epoch: the sampler shuffles differently "
        "every epoch, the same way in every process",
        build,
    )
