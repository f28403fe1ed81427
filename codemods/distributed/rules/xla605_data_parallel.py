"""XLA605 data-parallel."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

DATA_PARALLEL = Rule(
    code="XLA605",
    name="data-parallel",
    severity="info",
    summary="nn.DataParallel (one process, several GPUs) is removed with its .module accesses; kept and reported where "
    "the tool cannot follow them",
    fixable=True,
    why="Without CUDA devices DataParallel only calls the wrapped model; on XLA one process drives one device, "
    "and more devices mean more processes (DDP).",
    examples=lambda: (
        invalid(
            """
        import torch
        import torch.nn as nn


        def build(model):
            model = nn.DataParallel(model)
            return model.module
        """,
            """
        import torch


        def build(model):
            return model
        """,
            findings=(
                Expected(5, 5, "removed `model = nn.DataParallel(model)`"),
                Expected(5, 12, "model.module -> model"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            state = model.module.state_dict()
            """,
            note="no-data-parallel",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            torch.save(model.module.state_dict(), "m.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.save(model.state_dict(), "m.pt")
            """,
            note="module-access",
            findings=(
                Expected(4, 1, "removed `model = torch.nn.DataParallel(model)`"),
                Expected(4, 9, "model.module -> model"),
            ),
        ),
        invalid(
            """
            from torch.nn import DataParallel as DP

            net = DP(build()).cuda()
            """,
            """
            import torch_xla

            net = build().to(torch_xla.device())
            """,
            note="from-import",
            alias=True,
            findings=(Expected(3, 7, "DP(build()) -> build()"),),
        ),
    ),
)
