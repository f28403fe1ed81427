"""XLA001, XLA002: imports that rewritten code needs, and imports that rewrites left unused."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

ADD_IMPORT = Rule(
    "XLA001", "add-import", "info", "Add the torch_xla imports that rewritten code uses", True,
    why="Rewritten code calls torch_xla, so its imports are added: once, after the file's torch imports, "
    "under the file's own alias where it has one.",
    examples=(
        example(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            torch.save(model.state_dict(), "model.pt")
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            model = torch.nn.Linear(4, 2)
            xm.save(model.state_dict(), "model.pt")
            """,
        ),
    ),
)

REMOVE_STALE_IMPORT = Rule(
    "XLA002", "remove-stale-import", "info", "Remove an import that a rewrite left unused", True,
    why="A rewrite can leave an import unused (`xm` once `xm.xla_device()` is `torch_xla.device()`); it is "
    "removed so the file imports what it uses. Imports the tool did not make unused are left alone.",
    examples=(
        example(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = xm.xla_device()
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
        ),
    ),
)

RULES = (ADD_IMPORT, REMOVE_STALE_IMPORT)
