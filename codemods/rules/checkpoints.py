"""XLA4: checkpoints."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA401", "xla-save", "error", "`torch.save` becomes `xm.save` (moves tensors to the CPU first)", True),
    Rule("XLA402", "save-whole-module", "warning", "Saving a whole module pickles its device tensors: save its state_dict()", False),
    Rule("XLA403", "load-map-location", "error", "`torch.load(map_location=<CUDA or XLA device>)` loads on the CPU instead", True),
)
