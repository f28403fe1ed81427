"""XLA9: torch_xla names that moved between releases."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

XLA_RELEASE_NAMES = Rule(
    "XLA901", "xla-release-names", "error", "torch_xla names of another release become the target's names", True,
    why="torch_xla renamed and removed names between releases (`xm.xrt_world_size` and `xm.get_ordinal` are "
    "gone since 2.7), so code written for one release crashes on another: names move to the target's, "
    "in both directions.",
    examples=(
        example(
            """
            import torch_xla.core.xla_model as xm

            world_size = xm.xrt_world_size()
            rank = xm.get_ordinal()
            """,
            """
            import torch_xla.runtime as xr

            world_size = xr.world_size()
            rank = xr.global_ordinal()
            """,
        ),
        example(
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            torch_xla.sync()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            xm.mark_step()
            """,
            target="sagemaker",
        ),
    ),
)

RULES = (XLA_RELEASE_NAMES,)
