"""XLA201, XLA203, XLA3: optimizer steps, optimizers built before their model moves, step barriers and device loaders.

One module per rule (its code and name, and its hooks on the nodes the training facts name); this
package lists them."""

from __future__ import annotations

from codemods.training.rules.xla201_optimizer_step import OPTIMIZER_STEP
from codemods.training.rules.xla203_optimizer_before_move import OPTIMIZER_BEFORE_MOVE
from codemods.training.rules.xla213_untraced_optimizer_parameters import UNTRACED_OPTIMIZER_PARAMETERS
from codemods.training.rules.xla301_training_loop_barrier import TRAINING_LOOP_BARRIER
from codemods.training.rules.xla302_device_loader import DEVICE_LOADER
from codemods.training.rules.xla303_eval_loop_barrier import EVAL_LOOP_BARRIER
from codemods.training.rules.xla304_closure_barrier import CLOSURE_BARRIER
from codemods.training.rules.xla305_step_barrier import STEP_BARRIER
from codemods.training.rules.xla306_undriven_step import UNDRIVEN_STEP
from codemods.training.rules.xla307_library_training_loop import LIBRARY_TRAINING_LOOP

# In the order their hooks run on a node: the reports on a step call (XLA306, XLA213, XLA203) come
# before XLA201 ports it; the barriers and device loaders (XLA301-XLA305) hook loops, loaders,
# closures and lone steps, after the step rules, and a loop's hook (XLA301) after the hook on its
# loader (XLA302), which the traversal leaves first.
RULES = (
    UNDRIVEN_STEP,
    UNTRACED_OPTIMIZER_PARAMETERS,
    OPTIMIZER_BEFORE_MOVE,
    OPTIMIZER_STEP,
    TRAINING_LOOP_BARRIER,
    DEVICE_LOADER,
    EVAL_LOOP_BARRIER,
    CLOSURE_BARRIER,
    STEP_BARRIER,
    LIBRARY_TRAINING_LOOP,
)
