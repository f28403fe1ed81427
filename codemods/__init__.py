"""torch-xla-codemods: port native PyTorch training scripts to PyTorch/XLA."""

from __future__ import annotations

__version__ = "0.1.0"

import gc as _gc

# The imports build many objects that live as long as the process and free few: a
# collection every 700 of them would look through all of them again and again.
_threshold = _gc.get_threshold()
_gc.set_threshold(100_000, *_threshold[1:])
try:
    from codemods.conversion import Conversion, ConversionError
    from codemods.engine.rule import RuleSelection
    from codemods.pipeline import convert_source
    from codemods.rules import RULES
    from codemods.targets import TARGETS
finally:
    _gc.set_threshold(*_threshold)

__all__ = ["RULES", "TARGETS", "Conversion", "ConversionError", "RuleSelection", "convert_source", "__version__"]
