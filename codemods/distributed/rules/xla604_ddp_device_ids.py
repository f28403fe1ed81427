"""XLA604 ddp-device-ids: DistributedDataParallel stays, without ``device_ids``/``output_device``
(the distributed facts' ``ddp_calls``: on the xla backend it all-reduces the gradients itself),
and the inputs it moved to the GPU of ``device_ids`` are made on the device (``ddp_inputs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

DDP_DEVICE_IDS = Rule(
    code="XLA604",
    name="ddp-device-ids",
    severity="error",
    summary="DistributedDataParallel on XLA takes no device_ids/output_device; inputs it moved to the GPU are made on the device",
    fixable=True,
    why="device_ids name CUDA devices; on the xla backend DDP wraps the model on this process's XLA device and "
    "all-reduces the gradients itself, so a plain optimizer step is enough: the tool leaves the steps of a file "
    "that wraps a model in DDP plain. A step in another module of the project, which cannot see the wrap, is "
    "ported to xm.optimizer_step (XLA201): it all-reduces the gradients DDP already averaged once more, to the "
    "same values (one more all-reduce per step; make that step plain by hand to save it). A subclass of "
    "DistributedDataParallel (of the file, or of another module of the project, through its bases) takes DDP's "
    "arguments and wraps the model as DDP does: its device_ids go the same way (with them, in every process but "
    "the first, torch's forward copies the inputs to the device of that index, not the process's own: a PJRT "
    "process drives xla:0 alone, and the copy's side stream does not exist on XLA: TypeError). A "
    "subclass whose own forward scatters the inputs with `self.device_ids` (None once they go) needs porting by "
    "hand; the tool does not look into that forward.",
    examples=lambda: (
        invalid(
            """
        from torch.nn.parallel import DistributedDataParallel as DDP


        def wrap(model, local_rank):
            return DDP(model, device_ids=[local_rank], output_device=local_rank)
        """,
            """
        from torch.nn.parallel import DistributedDataParallel as DDP


        def wrap(model, local_rank):
            return DDP(model)
        """,
            findings=(Expected(5, 12, "device_ids, output_device removed from DDP(...)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            """,
            note="no-device-ids",
        ),
        valid(
            """
            from torch.nn.parallel import DistributedDataParallel


            class Wrapper(DistributedDataParallel):
                pass


            def wrap(model):
                return Wrapper(model, find_unused_parameters=True)
            """,
            note="subclass-without-device-ids",
        ),
        valid(
            """
            import torch


            class DDP(torch.nn.Module):
                def __init__(self, module, device_ids=None):
                    super().__init__()
                    self.module = module


            def wrap(model, rank):
                return DDP(model, device_ids=[rank])
            """,
            note="module-named-ddp",
            target="sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl")
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], output_device=0)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            dist.init_process_group("xla", init_method="xla://")
            model = torch.nn.parallel.DistributedDataParallel(model)
            """,
            note="ddp-keywords",
            findings=(
                Expected(
                    6,
                    9,
                    "device_ids, output_device removed from torch.nn.parallel.DistributedDataParallel(...): it wraps "
                    "the model on this process's XLA device and all-reduces gradients over the xla backend",
                ),
            ),
        ),
        invalid(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, [local_rank])
            """,
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            """,
            note="positional-device-ids",
            alias=True,
            findings=(
                Expected(
                    3,
                    9,
                    "device_ids removed from DDP(...): it wraps the model on this process's XLA device and "
                    "all-reduces gradients over the xla process group, which must be started before it",
                ),
            ),
        ),
        invalid(
            """
            from torch.nn.parallel import DistributedDataParallel


            class Wrapper(DistributedDataParallel):
                def forward(self, *inputs):
                    return self.module.training_step(*inputs)


            def wrap(model, rank):
                return Wrapper(model, device_ids=[rank], find_unused_parameters=True)
            """,
            """
            from torch.nn.parallel import DistributedDataParallel


            class Wrapper(DistributedDataParallel):
                def forward(self, *inputs):
                    return self.module.training_step(*inputs)


            def wrap(model, rank):
                return Wrapper(model, find_unused_parameters=True)
            """,
            note="subclass",
            findings=(Expected(10, 12, "device_ids removed from Wrapper(...) (a DistributedDataParallel subclass)"),),
        ),
        invalid(
            """
            from torch.nn.parallel import DistributedDataParallel as TorchDDP


            class Base(TorchDDP):
                pass


            class DDP(Base):
                pass


            def wrap(model, rank):
                model = DDP(model, [rank], rank)
                return model
            """,
            """
            from torch.nn.parallel import DistributedDataParallel as TorchDDP


            class Base(TorchDDP):
                pass


            class DDP(Base):
                pass


            def wrap(model, rank):
                model = DDP(model)
                return model
            """,
            note="subclass-of-subclass",
            alias=True,
            target="sagemaker",
            findings=(
                Expected(
                    13, 13, "device_ids, output_device removed from DDP(...) (a DistributedDataParallel subclass)"
                ),
            ),
        ),
    ),
)


@on_facts(DDP_DEVICE_IDS, nodes=lambda facts: facts.distributed.ddp_calls)
def _ddp(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.engine.nodes import args_by_position, counterpart, without_args

    dropped, _ = ctx.facts.distributed.ddp_calls[original]
    if not dropped:
        return updated
    names = ", ".join(
        sorted(
            name
            for name, arg in args_by_position(original, ("module", "device_ids", "output_device"))
            if any(arg is gone for gone in dropped)  # (``DDP(model, [rank], rank)``: both, by position)
        )
    )
    subclass = " (a DistributedDataParallel subclass)" if original in ctx.facts.distributed.ddp_subclass_calls else ""

    def build() -> cst.Call:
        to_remove = []
        for arg in dropped:
            if (new := counterpart(original, updated, arg)) is not None:
                ctx.forget_removed(arg, new)
                to_remove.append(updated.args.index(new))
        return updated.with_changes(args=without_args(list(updated.args), to_remove))

    return ctx.fix_or_keep(
        updated,
        DDP_DEVICE_IDS,
        original,
        f"{names} removed from {ctx.code(original.func)}(...){subclass}: it wraps the model on this process's XLA "
        f"device and {_reduces(ctx.facts, ctx.target.rendezvous)} (a plain optimizer step is enough; an "
        "xm.optimizer_step reduces them once more, to the same values)",
        build,
    )


@on_facts(DDP_DEVICE_IDS, nodes=lambda facts: facts.distributed.ddp_inputs)
def _ddp_input(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.engine.nodes import with_keyword

    return ctx.fix_or_keep(
        updated,
        DDP_DEVICE_IDS,
        original,
        f"{ctx.code(original)} -> {{new}}: DDP moved inputs to the GPU of device_ids; on XLA they are made "
        "on the device",
        lambda: (
            (device := ctx.device()) and updated.with_changes(args=with_keyword(list(updated.args), "device", device))
        ),
    )


def _reduces(facts: Facts, rendezvous: str) -> str:
    """What DDP all-reduces over: the xla process group this file starts on XLA, or that a
    callable of another module this run converts starts (torchvision's and DINO's
    ``utils.init_distributed_mode``), or one that must be started before it (the file starts
    none, or only under a CUDA check that stays),
    spelled with the target's rendezvous (torch 1.13 has no xla://: env://, the default)."""
    if facts.distributed.process_groups and not facts.device.guarded_groups:
        return "all-reduces gradients over the xla backend"
    if (starter := facts.distributed.external_group_start) is not None:
        return f"all-reduces gradients over the xla process group that {starter} starts on XLA"
    start = (
        'dist.init_process_group("xla", init_method="xla://")'
        if rendezvous == "xla://"
        else 'dist.init_process_group("xla")'
    )
    return (
        f"all-reduces gradients over the xla process group, which must be started before it ({start}): "
        "this file starts none that runs on XLA"
    )
