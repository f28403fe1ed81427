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
    "should be the same'. The guard goes when every model move of the file goes to the XLA device and one is "
    "not under such a guard; otherwise it is reported.",
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
            findings=(Expected(8, 4, "`if args.gpu is not None:` dropped"),),
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
    ),
)


@on_facts(GUARDED_INPUT_MOVE, nodes=lambda facts: facts.training.input_guards)
def _input_guard(
    ctx: Context[Facts], original: cst.If, updated: cst.If
) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
    import libcst as cst

    from codemods.device.rules.folded_ifs import fold_if

    test = ctx.code(original.test)
    if not ctx.facts.training.input_guards[original]:
        ctx.report(
            GUARDED_INPUT_MOVE,
            original.test,
            f"these moves run only `if {test}`; otherwise, on CUDA, DataParallel moved the inputs: on XLA they "
            "stay on the CPU unless the model does too; move them whenever the model is on the XLA device",
        )
        return updated
    parent = ctx.parent()
    is_elif = isinstance(parent, cst.If) and parent.orelse is original
    new = ctx.fix(
        GUARDED_INPUT_MOVE,
        original.test,
        f"`if {test}:` dropped: the model is on the XLA device on every path (DataParallel, which moved the "
        "inputs otherwise, is gone), so its inputs always move",
        lambda: fold_if(updated, True, is_elif, ctx.keep_lines_after),
    )
    if new is None:
        return updated
    ctx.imports.discard(original.test)
    return new
