"""XLA202, XLA204-XLA211, XLA214: mixed precision (autocast, gradient scalers, the optimizers under them).

One module per rule (its code and name), with the hooks that find and fix it on the nodes the
amp facts name (amp/analysis.py); this package lists them.  The concern has no rewrite of its own."""

from __future__ import annotations

from codemods.amp.rules.xla202_autocast import AUTOCAST
from codemods.amp.rules.xla204_float16_autocast import FLOAT16_AUTOCAST
from codemods.amp.rules.xla205_grad_scaler import GRAD_SCALER
from codemods.amp.rules.xla206_syncfree_optimizer import SYNCFREE_OPTIMIZER
from codemods.amp.rules.xla207_amp_optimizer import AMP_OPTIMIZER
from codemods.amp.rules.xla208_scaler_not_needed import SCALER_NOT_NEEDED
from codemods.amp.rules.xla209_precision_choice import PRECISION_CHOICE
from codemods.amp.rules.xla210_autocast_device_type import AUTOCAST_DEVICE_TYPE
from codemods.amp.rules.xla211_custom_autograd_amp import CUSTOM_AUTOGRAD_AMP
from codemods.amp.rules.xla214_disabled_autocast import DISABLED_AUTOCAST

# In the order their hooks run on a node: XLA208 says whether a scaler is needed before XLA205
# ports it, XLA207 reports an optimizer's unpacked keywords before XLA206 ports it.
RULES = (
    AUTOCAST,
    DISABLED_AUTOCAST,
    FLOAT16_AUTOCAST,
    SCALER_NOT_NEEDED,
    GRAD_SCALER,
    AMP_OPTIMIZER,
    SYNCFREE_OPTIMIZER,
    PRECISION_CHOICE,
    AUTOCAST_DEVICE_TYPE,
    CUSTOM_AUTOGRAD_AMP,
)
