"""XLA806 input-workers."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

INPUT_WORKERS = Rule(
    code="XLA806",
    name="input-workers",
    severity="warning",
    summary="dataloader_num_workers / preprocessing_num_workers left at their defaults",
    fixable=False,
    why="With no workers, batches are prepared in the training process between steps and the device waits; "
    "use at least as many workers as devices per host, and fewer than the host's CPUs.",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY),
            findings=(Expected(5, 12, "dataloader_num_workers is left at 0"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", dataloader_num_workers=4)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from dataclasses import dataclass, field
            from typing import Optional

            import transformers


            @dataclass
            class DataTrainingArguments:
                preprocessing_num_workers: Optional[int] = field(default=None, metadata={"help": "processes for preprocessing"})


            parser = transformers.HfArgumentParser((DataTrainingArguments, transformers.TrainingArguments))
            data_args, training_args = parser.parse_args_into_dataclasses()
            training_args.optim = "adamw_torch_xla"
            """,
            alias=True,
            findings=(Expected(9, 5, "preprocessing_num_workers defaults to None"),),
        ),
        invalid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
            """,
            findings=(Expected(3, 8, "dataloader_num_workers is left at 0"),),
        ),
    ),
)
