"""XLA4: checkpoints.

One module per rule (its code and name), with the hooks that find and fix it on the nodes
the checkpoint facts name (checkpoint/analysis.py); this package lists them."""

from __future__ import annotations

from codemods.checkpoint.rules.xla401_xla_save import XLA_SAVE
from codemods.checkpoint.rules.xla402_save_whole_module import SAVE_WHOLE_MODULE
from codemods.checkpoint.rules.xla403_load_map_location import LOAD_MAP_LOCATION
from codemods.checkpoint.rules.xla404_guarded_xla_save import GUARDED_XLA_SAVE

RULES = (XLA_SAVE, SAVE_WHOLE_MODULE, LOAD_MAP_LOCATION, GUARDED_XLA_SAVE)
