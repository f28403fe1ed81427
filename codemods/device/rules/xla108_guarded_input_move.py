"""XLA108 guarded-input-move."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
