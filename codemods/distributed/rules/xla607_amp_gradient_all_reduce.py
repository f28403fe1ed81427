"""XLA607 amp-gradient-all-reduce: without DDP, a mixed-precision step all-reduces the gradients
right after the scaled backward pass (the distributed facts' ``gradient_reduces``: the lines of
those passes, with their optimizer); a scaled backward whose step is elsewhere
(``unreduced_backwards``) is reported, held for the run's other files where they import it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A gradient-scaler helper whose callers are not in the run: one input for the cases of both targets, whose outputs differ.
SCALER_HELPER_CALLED_OUTSIDE_THE_RUN = """
import torch


def init_distributed_mode(args):
    torch.distributed.init_process_group(backend="nccl", world_size=args.world_size, rank=args.rank)


class NativeScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()

    def __call__(self, loss, optimizer, update_grad=True):
        self._scaler.scale(loss).backward()
        if update_grad:
            self._scaler.step(optimizer)
            self._scaler.update()
"""


AMP_GRADIENT_ALL_REDUCE = Rule(
    code="XLA607",
    name="amp-gradient-all-reduce",
    severity="error",
    summary="Without DDP, a mixed-precision step all-reduces the gradients right after the scaled backward pass",
    fixable=True,
    why="xm.optimizer_step averages gradients over the processes, but a GradScaler step does not: the AWS guide's "
    "recipe fetches the gradients and all-reduces them with scale=1.0/world size. A scaled backward whose "
    "optimizer step is elsewhere (a scaler helper in a util module, `loss_scaler(loss, optimizer)`) is reported "
    "for the all-reduce to be added by hand, unless a file of the run that imports the module wraps the model in "
    "DistributedDataParallel, which the port keeps and which all-reduces the gradients in backward; a run on one "
    "file says that the callers decide.",
    examples=lambda: (
        invalid(
            """
        import torch
        import torch.distributed as dist


        def train(loader, model, optimizer):
            dist.init_process_group("nccl")
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """,
            """
        import torch
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def train(loader, model, optimizer):
            dist.init_process_group("xla", init_method="xla://")
            scaler = torch.amp.GradScaler("xla")
            for x, y in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                xm.all_reduce("sum", xm._fetch_gradients(optimizer), scale=1.0 / xr.world_size())
                scaler.step(optimizer)
                scaler.update()
                torch_xla.sync()
        """,
            findings=(Expected(15, 9, 'gradients all-reduced after the scaled backward pass (xm.all_reduce("sum",'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP


            def train(loader, model, optimizer):
                dist.init_process_group("nccl")
                model = DDP(model)
                scaler = torch.cuda.amp.GradScaler()
                for x, y in loader:
                    with torch.cuda.amp.autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(loader, model, optimizer):
                dist.init_process_group("xla", init_method="xla://")
                model = DDP(model)
                scaler = torch.amp.GradScaler("xla")
                for x, y in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    torch_xla.sync()
            """,
            note="ddp-reduces",
        ),
        valid(
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm


            def train(loader, model, optimizer):
                dist.init_process_group("nccl")
                scaler = torch.cuda.amp.GradScaler()
                for x, y in loader:
                    with torch.cuda.amp.autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    xm.all_reduce("sum", xm._fetch_gradients(optimizer), scale=1.0 / xm.xrt_world_size())
                    scaler.step(optimizer)
                    scaler.update()
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.core.xla_model as xm
            import os
            import torch_xla.amp
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def train(loader, model, optimizer):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                dist.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())
                scaler = torch_xla.amp.GradScaler()
                for x, y in loader:
                    with torch_xla.amp.autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    xm.all_reduce("sum", xm._fetch_gradients(optimizer), scale=1.0 / xm.xrt_world_size())
                    scaler.step(optimizer)
                    scaler.update()
                    xm.mark_step()
            """,
            target="sagemaker",
            note="reduced-already",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.distributed as D
            from torch.cuda.amp import GradScaler, autocast


            def train(loader, model, opt):
                D.init_process_group("nccl")
                scaler = GradScaler()
                for x, y in loader:
                    with autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
            """,
            """
            import torch.distributed as D
            import torch.amp
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
            import torch_xla.runtime as xr


            def train(loader, model, opt):
                D.init_process_group("xla", init_method="xla://")
                scaler = torch.amp.GradScaler("xla")
                for x, y in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    xm.all_reduce("sum", xm._fetch_gradients(opt), scale=1.0 / xr.world_size())
                    scaler.step(opt)
                    scaler.update()
                    torch_xla.sync()
            """,
            note="amp-from-import",
            alias=True,
            findings=(Expected(15, 9, 'gradients all-reduced after the scaled backward pass (xm.all_reduce("sum",'),),
        ),
        invalid(
            SCALER_HELPER_CALLED_OUTSIDE_THE_RUN,
            """
            import torch
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def init_distributed_mode(args):
                torch.distributed.init_process_group("xla", init_method="xla://")


            class NativeScaler:
                def __init__(self):
                    self._scaler = torch.amp.GradScaler("xla")

                def __call__(self, loss, optimizer, update_grad=True):
                    self._scaler.scale(loss).backward()
                    if update_grad:
                        self._scaler.step(optimizer)
                        self._scaler.update()
            """,
            note="a-scaler-helper-whose-callers-are-not-in-the-run",
            findings=(
                Expected(14, 9, "unless the model it steps is wrapped in DistributedDataParallel (which all-reduces"),
            ),
        ),
        invalid(
            SCALER_HELPER_CALLED_OUTSIDE_THE_RUN,
            """
            import torch
            import os
            import torch_xla.amp
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


            def init_distributed_mode(args):
                os.environ.setdefault("MASTER_ADDR", "localhost")
                os.environ.setdefault("MASTER_PORT", "12355")
                torch.distributed.init_process_group("xla", rank=xm.get_ordinal(), world_size=xm.xrt_world_size())


            class NativeScaler:
                def __init__(self):
                    self._scaler = torch_xla.amp.GradScaler()

                def __call__(self, loss, optimizer, update_grad=True):
                    self._scaler.scale(loss).backward()
                    if update_grad:
                        self._scaler.step(optimizer)
                        self._scaler.update()
            """,
            target="sagemaker",
            note="a-scaler-helper-whose-callers-are-not-in-the-run-sagemaker",
            findings=(
                Expected(19, 9, "(xm.all_reduce('sum', xm._fetch_gradients(optimizer), scale=1.0 / world size))"),
            ),
        ),
    ),
)


@on_facts(AMP_GRADIENT_ALL_REDUCE, nodes=lambda facts: facts.distributed.gradient_reduces)
def _gradient_reduce(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
    import libcst as cst

    from codemods.engine.nodes import parse_dotted
    from codemods.engine.positions import code_of

    optimizer = ctx.facts.distributed.gradient_reduces[original]

    def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
        fetch = ctx.call("fetch_gradients", [cst.Arg(parse_dotted(optimizer))])
        world = ctx.call("world_size")
        reduce_ = ctx.imports.expression(ctx.target.api("all_reduce"))
        if fetch is None or world is None or reduce_ is None:
            return None
        line = cst.parse_statement(f'{code_of(reduce_)}("sum", {code_of(fetch)}, scale=1.0 / {code_of(world)})\n')
        return cst.FlattenSentinel([updated, line])

    return ctx.fix_or_keep(  # type: ignore[misc]  # mypy cannot infer fix_or_keep()'s ReplacementT from a build returning a FlattenSentinel
        updated,
        AMP_GRADIENT_ALL_REDUCE,
        original,
        "gradients all-reduced after the scaled backward pass ({new}): without DDP nothing else averages "
        "them over the processes",
        build,
        result=lambda node: node.nodes[1] if isinstance(node, cst.FlattenSentinel) else node,
    )


@on_facts(AMP_GRADIENT_ALL_REDUCE, nodes=lambda facts: facts.distributed.unreduced_backwards)
def _unreduced_backward(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A scaled backward in a file without DDP whose optimizer comes from elsewhere (a
    scaler helper of a util module): the caller's DDP, if any, reduces the gradients in
    backward; otherwise nothing averages them over the processes.  Where other files of
    the run import this one, the finding waits for them (StandsUnlessImportedUnderDdp)."""
    from codemods.distributed.held_conditions import StandsUnlessImportedUnderDdp

    reduce_ = (
        f"{ctx.target.api('all_reduce').spelled}('sum', "
        f"{ctx.target.api('fetch_gradients').spelled}(optimizer), scale=1.0 / world size)"
    )
    if ctx.facts.project.context.imported_in_run():
        ctx.report(
            AMP_GRADIENT_ALL_REDUCE,
            original,
            "scaled backward pass whose optimizer step is elsewhere, and no file of this run that imports this "
            f"one wraps the model in DistributedDataParallel: all-reduce the gradients before stepping ({reduce_})",
            held=StandsUnlessImportedUnderDdp(),
        )
        return updated
    ctx.report(
        AMP_GRADIENT_ALL_REDUCE,
        original,
        "scaled backward pass whose optimizer step is elsewhere: unless the model it steps is wrapped in "
        "DistributedDataParallel (which all-reduces the gradients in backward; a run on the project folder "
        f"checks the files that import this one), all-reduce the gradients before stepping ({reduce_})",
    )
    return updated
