"""XLA108 guarded-input-move: ``if args.gpu is not None: images = images.cuda(args.gpu)`` (the
training facts' ``input_guards``): without the index, DataParallel moved the inputs on CUDA; on
XLA nothing else does, so the guard goes where the model is on the XLA device on every path, and
is reported otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

GUARDED_INPUT_MOVE = Rule(
    code="XLA108",
    name="guarded-input-move",
    severity="error",
    summary="Input moves that run only `if args.gpu is not None:` become unconditional once the model is always on XLA",
    fixable=True,
    why="CUDA scripts that run on one GPU with `--gpu` or on all of them through DataParallel move their "
    "batches only when a GPU index is given: otherwise DataParallel scatters them. The port removes "
    "DataParallel and puts the model on the XLA device on every path, so the batches must always move: left "
    "guarded, the first batch fails with 'Input type (torch.FloatTensor) and weight type (XLAFloatType) "
    "should be the same'. A DataParallel the port keeps (XLA605: a loaded state dict needs its `module.` names) calls the model directly on XLA and moves nothing either, and the message says so. The guard goes when every model move of the file goes to the XLA device and one is "
    "not under such a guard; otherwise it is reported. Likewise a guard that a CUDA device count decides "
    "(`if n_gpu == 1:` with `n_gpu = torch.cuda.device_count()`, in the function or handed in): on CUDA the other "
    "path had `DDP(device_ids=[rank])` move the inputs; the port drops device_ids (DDP on XLA moves no inputs) and "
    "reads the count from the XLA runtime (the processes on this host, more than 1 on a host with several "
    "devices), so the test is evaluated with that value: a guard around nothing but the batch moves goes; one "
    "with more in it, or an else, is reported (XLA116).",
    examples=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model).cuda()
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model = model.to(torch_xla.device())
            images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            findings=(Expected(5, 4, "`if args.gpu is not None:` dropped"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = model.cuda(args.gpu)
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
                print("moved")
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model = model.to(torch_xla.device())
            if args.gpu is not None:
                images = images.to(torch_xla.device(), non_blocking=True)
                print("moved")
            output = model(images)
            """,
            note="the-guard-does-more-than-move",
        ),
        # A count that is no CUDA device count (a flag's number) decides nothing the port changes.
        valid(
            """
            import torch
            import torch_xla

            device = torch.device("xla")
            for batch in loader:
                if args.n_gpu == 1:
                    batch = tuple(t.to(device) for t in batch)
                model(*batch).sum().backward()
                torch_xla.sync()
            """,
            note="a-flag-count-decides-the-batch-move",
            target_only=True,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            if args.gpu is not None:
                model = model.cuda(args.gpu)
            else:
                model = torch.nn.DataParallel(model).cuda()
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            if args.gpu is not None:
                model = model.to(torch_xla.device())
            else:
                model = model.to(torch_xla.device())
            images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            note="data-parallel-moved-them",
            findings=(
                Expected(
                    8,
                    4,
                    "`if args.gpu is not None:` dropped: the model is on the XLA device on every path (DataParallel, "
                    "which moved the inputs otherwise, is gone), so its inputs always move",
                ),
            ),
        ),
        # No DataParallel in the file: the message names none.
        *(
            invalid(
                """
                import torch

                model = model.cuda()
                if args.gpu is not None:
                    images = images.cuda(args.gpu, non_blocking=True)
                output = model(images)
                """,
                f"""
                import torch
                {imports}

                model = model.to({device})
                images = images.to({device}, non_blocking=True)
                output = model(images)
                """,
                target=target,
                note=f"no-data-parallel-{target}",
                findings=(
                    Expected(
                        5,
                        4,
                        "`if args.gpu is not None:` dropped: the model is on the XLA device on every path, so its "
                        "inputs always move",
                    ),
                ),
            )
            for target, imports, device in (
                ("2.9", "import torch_xla", "torch_xla.device()"),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()"),
            )
        ),
        # DataParallel kept (XLA605: the file loads a state dict into it): the message says so.
        *(
            invalid(
                """
                import torch

                model = torch.nn.DataParallel(model).cuda()
                model.load_state_dict(torch.load(path)["state_dict"])
                for images, target in loader:
                    if args.gpu is not None:
                        images = images.cuda(args.gpu, non_blocking=True)
                    target = target.cuda(args.gpu, non_blocking=True)
                    loss = crit(model(images), target)
                    loss.backward()
                    opt.step()
                """,
                f"""
                import torch
                {imports}

                model = torch.nn.DataParallel(model).to({device})
                model.load_state_dict(torch.load(path, map_location="cpu")["state_dict"])
                for images, target in loader:
                    images = images.to({device}, non_blocking=True)
                    target = target.to({device}, non_blocking=True)
                    loss = crit(model(images), target)
                    loss.backward()
                    opt.step()
                    {barrier}
                """,
                target=target,
                note=f"data-parallel-kept-{target}",
                findings=(
                    Expected(
                        7,
                        8,
                        "`if args.gpu is not None:` dropped: the model is on the XLA device on every path (DataParallel "
                        "moved the inputs otherwise; it is kept, and on XLA it calls the model directly, moving "
                        "nothing), so its inputs always move",
                    ),
                ),
            )
            for target, imports, device, barrier in (
                ("2.9", "import torch_xla", "torch_xla.device()", "torch_xla.sync()"),
                ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()", "xm.mark_step()"),
            )
        ),
        invalid(
            """
            import torch

            model.to(device)
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            output = model(images)
            """,
            """
            import torch
            import torch_xla

            model.to(device)
            if args.gpu is not None:
                images = images.to(torch_xla.device(), non_blocking=True)
            output = model(images)
            """,
            note="model-device-may-be-the-cpu-reported",
            findings=(Expected(5, 4, "these moves run only `if args.gpu is not None`; otherwise, on CUDA,"),),
        ),
        invalid(
            """
            import torch.nn as tnn

            net = tnn.DataParallel(net).cuda() if args.gpu is None else net.cuda(args.gpu)
            if args.gpu is not None:
                x = x.cuda(args.gpu)
            loss = tnn.functional.mse_loss(net(x), y)
            """,
            """
            import torch.nn as tnn
            import torch_xla

            net = net.to(torch_xla.device()) if args.gpu is None else net.to(torch_xla.device())
            x = x.to(torch_xla.device())
            loss = tnn.functional.mse_loss(net(x), y)
            """,
            alias=True,
            findings=(Expected(5, 4, "`if args.gpu is not None:` dropped"),),
        ),
        # A CUDA device count that decides the batch move: the port reads this host's process
        # count instead (more than 1 with several devices), and DDP on XLA moves no inputs.
        *(
            invalid(
                """
                import torch
                from torch.cuda import device_count


                def setup(rank):
                    return torch.device("cuda", rank), device_count()


                def train(model, loader, opt, rank):
                    device, n_gpu = setup(rank)
                    model = torch.nn.parallel.DistributedDataParallel(model.to(device), device_ids=[rank])
                    for batch in loader:
                        if n_gpu == 1:
                            batch = tuple(t.to(device) for t in batch)
                        x, y = batch
                        model(x).sum().backward()
                        opt.step()
                """,
                f"""
                import torch
                {imports}


                def setup(rank):
                    return {device}, {count}


                def train(model, loader, opt, rank):
                    device, n_gpu = setup(rank)
                    model = torch.nn.parallel.DistributedDataParallel(model.to(device))
                    for batch in loader:
                        batch = tuple(t.to(device) for t in batch)
                        x, y = batch
                        model(x).sum().backward()
                        opt.step()
                        {barrier}
                """,
                target=target,
                alias=True,
                note=f"a-device-count-decides-the-batch-move-{target}",
                findings=(
                    Expected(
                        14 if target == "2.9" else 13,
                        12,
                        "`if n_gpu == 1:` dropped: `n_gpu` becomes the XLA runtime's local process count (more than 1 "
                        "on a host with several devices), so `n_gpu == 1` may be False on XLA",
                    ),
                ),
            )
            for target, imports, device, count, barrier in (
                (
                    "2.9",
                    "import torch_xla\n                import torch_xla.runtime as xr",
                    "torch_xla.device()",
                    "xr.local_process_count()",
                    "torch_xla.sync()",
                ),
                (
                    "sagemaker",
                    "import torch_xla.core.xla_model as xm",
                    "xm.xla_device()",
                    "xm.xrt_world_size()",
                    "xm.mark_step()",
                ),
            )
        ),
    ),
)


@on_facts(GUARDED_INPUT_MOVE, nodes=lambda facts: facts.training.input_guards)
def _input_guard(
    ctx: Context[Facts], original: cst.If, updated: cst.If
) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    test = ctx.code(original.test)
    if not ctx.facts.training.input_guards[original]:
        ctx.report(
            GUARDED_INPUT_MOVE,
            original.test,
            f"these moves run only `if {test}`; otherwise, on CUDA, DataParallel moved the inputs: on XLA they "
            "stay on the CPU unless the model does too; move them whenever the model is on the XLA device",
        )
        return updated
    return _dropped(
        ctx,
        original,
        updated,
        f"`if {test}:` dropped: the model is on the XLA device on every path{_data_parallel_note(ctx.facts)}, so "
        "its inputs always move",
    )


def _data_parallel_note(facts: Facts) -> str:
    """What became of the file's DataParallel, which moved the inputs on the other path (XLA605
    removes it, or keeps it where a loaded state dict or the model's leaving the file needs
    its ``module.`` names)."""
    part = facts.distributed
    if not part.data_parallel:
        return ""
    if any(
        call in part.state_dict_loads or call in part.kept_data_parallel or not removable
        for call, removable in part.data_parallel.items()
    ):
        return " (DataParallel moved the inputs otherwise; it is kept, and on XLA it calls the model directly, moving nothing)"
    return " (DataParallel, which moved the inputs otherwise, is gone)"


@on_facts(GUARDED_INPUT_MOVE, nodes=lambda facts: facts.obligations.count_guards)
def _count_guard(
    ctx: Context[Facts], original: cst.If, updated: cst.If
) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    """``if n_gpu == 1:`` around a loop's batch moves, the count now the XLA runtime's."""
    return _dropped(
        ctx,
        original,
        updated,
        f"`if {ctx.code(original.test)}:` dropped: {ctx.facts.obligations.count_guards[original]}, so the batches "
        "always move",
    )


def _dropped(
    ctx: Context[Facts], original: cst.If, updated: cst.If, message: str
) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    """The ``if`` around the input moves goes, its body kept in its place (``message`` says why);
    what only its test used is no longer imported."""
    import libcst as cst

    from codemods.device.rules.folded_ifs import fold_if

    parent = ctx.parent()
    is_elif = isinstance(parent, cst.If) and parent.orelse is original
    new = ctx.fix(
        GUARDED_INPUT_MOVE, original.test, message, lambda: fold_if(updated, True, is_elif, ctx.keep_lines_after)
    )
    if new is None:
        return updated
    ctx.imports.discard(original.test)
    return new
