"""XLA8: Hugging Face Trainer scripts and Accelerate."""

from __future__ import annotations

from codemods.engine.rule import Example, Rule

_TRAINER = """\
from transformers import Trainer, TrainingArguments


def main():
    args = TrainingArguments(output_dir="out"{args})
    Trainer(model=build_model(), args=args, train_dataset=load()).train()
{extra}

if __name__ == "__main__":
    main()
"""
_ENTRY = """

def _mp_fn(index):
    main()
"""

TRAINER_XLA_OPTIMIZER = Rule(
    "XLA801", "trainer-xla-optimizer", "error",
    'TrainingArguments use optim="adamw_torch_xla" (sync-free AdamW), in code or on the parsed arguments', True,
    why="With torch >= 2.8 the Trainer's default optimizer is fused AdamW, which raises on XLA tensors; "
    "adamw_torch_xla is the same AdamW, written for XLA (no host sync in the step).",
    examples=(Example(
        _TRAINER.format(args="", extra=""),
        _TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY),
    ),),
)

TRAINER_ONE_DEVICE = Rule(
    "XLA802", "trainer-one-device", "info",
    "A Trainer script needs nothing else for one device: the Trainer places data and ends steps itself", False,
    why="On XLA the Trainer moves the model and batches to the device, wraps its loaders in MpDeviceLoader "
    "and reads losses only at logging steps; distributed runs call `_mp_fn(index)`.",
    examples=(Example(_TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=_ENTRY)),),
)

MP_FN_ENTRY_POINT = Rule(
    "XLA803", "mp-fn-entry-point", "info",
    "`def _mp_fn(index): main()` is added: SageMaker's pytorchxla launcher and torch_xla.launch call it", True,
    why="Distributed XLA launchers start each process by calling `_mp_fn(index)` in the script; "
    "one-device runs never call it.",
    examples=(Example(
        _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=""),
        _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=_ENTRY),
    ),),
)

STATIC_PADDING = Rule(
    "XLA804", "static-padding", "warning",
    'Tokenizer calls and collators that pad to the longest sequence pad to max_length instead', True,
    why="`padding=True` or `\"longest\"` gives each batch its own sequence length, and every new shape "
    "compiles a new graph; `padding=\"max_length\"` with a fixed max_length gives one shape.",
    examples=(Example(
        'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
        'batch = tokenizer(texts, padding=True, truncation=True, max_length=128)\n',
        'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
        'batch = tokenizer(texts, padding="max_length", truncation=True, max_length=128)\n',
    ),),
)

PADDING_LENGTH = Rule(
    "XLA805", "padding-length", "warning",
    'padding="max_length" without max_length or truncation=True: lengths are not fixed', False,
    why="Without max_length the tokenizer pads to its model_max_length (may be huge or unset); without "
    "truncation longer texts keep their own length, each a new shape to compile.",
    examples=(Example(
        'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
        'batch = tokenizer(texts, padding="max_length")\n'
    ),),
)

INPUT_WORKERS = Rule(
    "XLA806", "input-workers", "warning",
    "dataloader_num_workers / preprocessing_num_workers left at their defaults", False,
    why="With no workers, batches are prepared in the training process between steps and the device waits; "
    "use at least as many workers as devices per host, and fewer than the host's CPUs.",
    examples=(Example(_TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY)),),
)

ACCELERATE_LOOP = Rule(
    "XLA807", "accelerate-loop", "info",
    "An Accelerate training loop: Accelerate already does the XLA work, nothing to port", False,
    why="On XLA, Accelerate places the model and batches, wraps prepared loaders in MpDeviceLoader (which "
    "ends each step) and steps optimizers with xm.optimizer_step; launch it with an XLA accelerate config.",
    examples=(Example(
        "import torch\nfrom accelerate import Accelerator\n\naccelerator = Accelerator()\n"
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\nfor batch in loader:\n"
        "    loss = model(**batch).loss\n    accelerator.backward(loss)\n    optimizer.step()\n    optimizer.zero_grad()\n"
    ),),
)

RULES = (TRAINER_XLA_OPTIMIZER, TRAINER_ONE_DEVICE, MP_FN_ENTRY_POINT, STATIC_PADDING, PADDING_LENGTH, INPUT_WORKERS, ACCELERATE_LOOP)
