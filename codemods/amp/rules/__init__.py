"""XLA202, XLA204-XLA211: mixed precision (autocast, gradient scalers, the optimizers under them).

One module per rule (its code and name); this package lists them."""

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

RULES = (
    AUTOCAST,
    FLOAT16_AUTOCAST,
    GRAD_SCALER,
    SYNCFREE_OPTIMIZER,
    AMP_OPTIMIZER,
    SCALER_NOT_NEEDED,
    PRECISION_CHOICE,
    AUTOCAST_DEVICE_TYPE,
    CUSTOM_AUTOGRAD_AMP,
)
