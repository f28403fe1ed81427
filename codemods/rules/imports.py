"""XLA0: imports, and setup that lives in another file."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA001", "add-import", "info", "Add the torch_xla imports that rewritten code uses", True),
    Rule("XLA002", "remove-stale-import", "info", "Remove an import that a rewrite left unused", True),
    Rule("XLA003", "cross-file", "error", "Setup that comes from another file must be converted there", False),
)
