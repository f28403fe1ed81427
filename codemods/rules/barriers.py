"""XLA3: step barriers and device loaders."""

from __future__ import annotations

from codemods.rules.base import Rule

RULES = (
    Rule("XLA301", "training-loop-barrier", "error", "A training loop ends every iteration with the step barrier", True),
    Rule("XLA302", "device-loader", "error", "A loader that feeds the XLA device is wrapped in MpDeviceLoader", True),
    Rule("XLA303", "eval-loop-barrier", "error", "An evaluation loop over the device ends every iteration with the step barrier", True),
    Rule("XLA304", "closure-barrier", "error", "An optimizer closure (LBFGS) ends with the step barrier", True),
)
