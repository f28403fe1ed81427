"""XLA821-XLA822: Lightning and Fabric (names checked against Lightning 2.6.6).

One module per rule (its code and name), with the hooks that fix and report it on the
settings the Lightning facts name (lightning/analysis.py); this package lists them."""

from __future__ import annotations

from codemods.lightning.rules.xla821_lightning_xla import LIGHTNING_XLA
from codemods.lightning.rules.xla822_lightning_manual import LIGHTNING_MANUAL

RULES = (LIGHTNING_XLA, LIGHTNING_MANUAL)
