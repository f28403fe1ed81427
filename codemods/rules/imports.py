"""XLA0: imports, and setup that lives in another file."""

from __future__ import annotations

from codemods.rules.base import Example, Rule

RULES = (
    Rule("XLA001", "add-import", "info", "Add the torch_xla imports that rewritten code uses", True),
    Rule("XLA002", "remove-stale-import", "info", "Remove an import that a rewrite left unused", True),
    Rule("XLA003", "cross-file", "error", "Setup that comes from another file must be converted there", False),
    Rule(
        "XLA004",
        "third-party-cuda",
        "error",
        "A third-party API that runs only on CUDA (Apex AMP and fused kernels, timm's CUDA scalers, DeepSpeed)",
        False,
        why="These libraries call CUDA kernels or CUDA's gradient scaler directly: on an XLA machine they fail, "
        "or silently do nothing. Imports of other third-party packages never need converting.",
        examples=(Example("import torch\nfrom apex import amp\nmodel, optimizer = amp.initialize(model, optimizer)\n"),),
    ),
)
