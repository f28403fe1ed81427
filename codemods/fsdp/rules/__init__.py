"""XLA611-XLA613: PyTorch FSDP.

One module per rule (its code and name), with the hooks that find and fix it on the nodes
the FSDP facts name (fsdp/analysis.py) and on references to torch's FSDP names; this
package lists them."""

from __future__ import annotations

from codemods.fsdp.rules.xla611_xla_fsdp import XLA_FSDP
from codemods.fsdp.rules.xla612_fsdp_manual import FSDP_MANUAL
from codemods.fsdp.rules.xla613_fsdp_state_dict import FSDP_STATE_DICT

RULES = (XLA_FSDP, FSDP_MANUAL, FSDP_STATE_DICT)
