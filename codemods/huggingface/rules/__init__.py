"""XLA8: Hugging Face Trainer scripts and Accelerate.

One module per rule (its code and name), with the hooks that find and fix it on the nodes the
Hugging Face facts name (huggingface/analysis.py); this package lists them.  XLA803's hook adds
the entry point after the module-level ``main`` the distributed facts name (``facts.entry``)."""

from __future__ import annotations

from codemods.huggingface.rules.xla801_trainer_xla_optimizer import TRAINER_XLA_OPTIMIZER
from codemods.huggingface.rules.xla802_trainer_one_device import TRAINER_ONE_DEVICE
from codemods.huggingface.rules.xla803_mp_fn_entry_point import MP_FN_ENTRY_POINT
from codemods.huggingface.rules.xla804_static_padding import STATIC_PADDING
from codemods.huggingface.rules.xla805_padding_length import PADDING_LENGTH
from codemods.huggingface.rules.xla806_input_workers import INPUT_WORKERS
from codemods.huggingface.rules.xla807_accelerate_loop import ACCELERATE_LOOP
from codemods.huggingface.rules.xla808_model_placement import MODEL_PLACEMENT
from codemods.huggingface.rules.xla809_bf16_mixed_precision import BF16_MIXED_PRECISION
from codemods.huggingface.rules.xla810_accelerate_deepspeed import ACCELERATE_DEEPSPEED

# In the order their hooks run on a node: INPUT_WORKERS reports on the statement that parses
# TrainingArguments before TRAINER_XLA_OPTIMIZER puts a statement after it (a node's hooks
# stop at the first that hands back more than one statement).
RULES = (
    INPUT_WORKERS,
    TRAINER_XLA_OPTIMIZER,
    TRAINER_ONE_DEVICE,
    MP_FN_ENTRY_POINT,
    STATIC_PADDING,
    PADDING_LENGTH,
    ACCELERATE_LOOP,
    MODEL_PLACEMENT,
    BF16_MIXED_PRECISION,
    ACCELERATE_DEEPSPEED,
)
