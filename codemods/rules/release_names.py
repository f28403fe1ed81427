"""XLA9: torch_xla names that moved between releases."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA901", "xla-release-names", "error", "torch_xla names of another release become the target's names", True),
)
