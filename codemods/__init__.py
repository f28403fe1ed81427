"""torch-xla-codemods: port native PyTorch training scripts to PyTorch/XLA."""

from __future__ import annotations

__version__ = "0.1.0"

from codemods.pipeline import Conversion, ConversionError, convert_source
from codemods.rules import RULES, RuleSelection
from codemods.targets import TARGETS

__all__ = ["RULES", "TARGETS", "Conversion", "ConversionError", "RuleSelection", "convert_source", "__version__"]
