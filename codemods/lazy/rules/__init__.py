"""XLA7: lazy mode.  Host reads that run an extra graph every step (XLA70x) and
recompilation sources that make every step a new graph (XLA71x).  Findings point at
the line of the operation itself (``xla-codemod doctor`` matches them with what it
measures at run time).

One module per rule, a whole unit: its code, cases and the hooks that run on the nodes the lazy
facts name (XLA701's step closure is built by step_closures.py here); this package lists them."""

from __future__ import annotations

from codemods.lazy.rules.xla701_host_read_logging import HOST_READ_LOGGING
from codemods.lazy.rules.xla702_host_read_value import HOST_READ_VALUE
from codemods.lazy.rules.xla703_device_control_flow import DEVICE_CONTROL_FLOW
from codemods.lazy.rules.xla704_carried_state_barrier import CARRIED_STATE_BARRIER
from codemods.lazy.rules.xla711_sliced_device_data import SLICED_DEVICE_DATA
from codemods.lazy.rules.xla712_step_varying_shape import STEP_VARYING_SHAPE
from codemods.lazy.rules.xla713_dynamic_shape import DYNAMIC_SHAPE
from codemods.lazy.rules.xla714_short_last_batch import SHORT_LAST_BATCH

RULES = (
    HOST_READ_LOGGING,
    HOST_READ_VALUE,
    DEVICE_CONTROL_FLOW,
    CARRIED_STATE_BARRIER,
    SLICED_DEVICE_DATA,
    STEP_VARYING_SHAPE,
    DYNAMIC_SHAPE,
    SHORT_LAST_BATCH,
)
