"""XLA2: optimizer steps and mixed precision."""

from __future__ import annotations

from codemods.rules.base import Rule, example

RULES = (
    Rule(
        "XLA201", "optimizer-step", "error", "`optimizer.step()` becomes `xm.optimizer_step(optimizer)`", True,
        why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
        "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
        "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces.)",
        examples=(
            example(
                """
                import torch

                for data, target in loader:
                    loss = loss_fn(model(data), target)
                    loss.backward()
                    optimizer.step()
                """,
                """
                import torch
                import torch_xla
                import torch_xla.core.xla_model as xm

                for data, target in loader:
                    loss = loss_fn(model(data), target)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
                """,
            ),
        ),
    ),
    Rule("XLA202", "amp", "error", "CUDA mixed precision (autocast, GradScaler) is not ported by this version", False),
    Rule(
        "XLA203", "optimizer-before-move", "error", "An optimizer built before its model moves to the XLA device gets the moved parameters", True,
        why="Moving a module to an XLA device replaces its Parameter objects (on CUDA they are kept), so an "
        "optimizer built from `model.parameters()` before the move updates stale CPU copies: the model silently "
        "trains nothing. The model is moved first.",
        examples=(
            example(
                """
                import torch

                device = torch.device("cuda")
                model = torch.nn.Linear(3, 1)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                model.to(device)
                """,
                """
                import torch
                import torch_xla

                device = torch_xla.device()
                model = torch.nn.Linear(3, 1)
                optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
                model.to(device)
                """,
            ),
        ),
    ),
)
