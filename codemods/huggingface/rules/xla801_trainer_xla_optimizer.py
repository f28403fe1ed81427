"""XLA801 trainer-xla-optimizer."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

TRAINER_XLA_OPTIMIZER = Rule(
    code="XLA801",
    name="trainer-xla-optimizer",
    severity="error",
    summary='TrainingArguments use optim="adamw_torch_xla" (sync-free AdamW), in code or on the parsed arguments',
    fixable=True,
    why="With torch >= 2.8 the Trainer's default optimizer is fused AdamW, which raises on XLA tensors; "
    "adamw_torch_xla is the same AdamW, written for XLA (no host sync in the step).",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args="", extra=""),
            _TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY),
            findings=(Expected(5, 12, 'optim="adamw_torch_xla" added'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import Trainer, TrainingArguments, is_torch_xla_available

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla" if is_torch_xla_available() else "adamw_torch", dataloader_num_workers=2)
            trainer = Trainer(model=model, args=args)
            """,
            note="xla-aware",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch_xla', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            alias=True,
            findings=(Expected(3, 8, "optim='adamw_torch' -> \"adamw_torch_xla\""),),
        ),
        invalid(
            """
            from transformers import Trainer, TrainingArguments


            def main():
                args = TrainingArguments(
                    output_dir="out",
                    per_device_train_batch_size=8,
                    dataloader_num_workers=4,
                )
                trainer = Trainer(model=model, args=args, train_dataset=train_set)
                trainer.train()


            if __name__ == "__main__":
                main()
            """,
            """
            from transformers import Trainer, TrainingArguments


            def main():
                args = TrainingArguments(
                    output_dir="out",
                    per_device_train_batch_size=8,
                    dataloader_num_workers=4,
                    optim="adamw_torch_xla",
                )
                trainer = Trainer(model=model, args=args, train_dataset=train_set)
                trainer.train()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                main()
            """,
            note="code",
            findings=(Expected(5, 12, 'optim="adamw_torch_xla" added'),),
        ),
        invalid(
            """
            import sys

            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
                if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                    model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
                else:
                    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
                trainer = Seq2SeqTrainer(model=model, args=training_args)
                trainer.train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()
            """,
            """
            import sys

            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
                if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                    model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
                else:
                    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
                if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
                    training_args.optim = "adamw_torch_xla"
                trainer = Seq2SeqTrainer(model=model, args=training_args)
                trainer.train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()
            """,
            note="parser",
            findings=(
                Expected(12, 5, 'training_args.optim = "adamw_torch_xla" after parsing, when it holds a torch AdamW'),
            ),
        ),
        *(
            invalid(
                """
                from dataclasses import dataclass

                from transformers import HfArgumentParser, Trainer, TrainingArguments


                @dataclass
                class ScriptArguments:
                    optimizer: str = "adamw"


                def _mp_fn(index):
                    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
                    script_args, training_args = parser.parse_args_into_dataclasses()
                    Trainer(model=model, args=training_args).train()
                """,
                """
                from dataclasses import dataclass

                from transformers import HfArgumentParser, Trainer, TrainingArguments


                @dataclass
                class ScriptArguments:
                    optimizer: str = "adamw"


                def _mp_fn(index):
                    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
                    script_args, training_args = parser.parse_args_into_dataclasses()
                    if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
                        training_args.optim = "adamw_torch_xla"
                    Trainer(model=model, args=training_args).train()
                """,
                target=target,
                note=f"script-dataclass-default-kept-{target}",
                findings=(Expected(14, 5, "a dataclass's or the command line's value, which are left as they are"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)
