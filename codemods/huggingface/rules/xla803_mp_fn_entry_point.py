"""XLA803 mp-fn-entry-point."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

MP_FN_ENTRY_POINT = Rule(
    code="XLA803",
    name="mp-fn-entry-point",
    severity="info",
    summary="`def _mp_fn(index): main()` is added: SageMaker's pytorchxla launcher and torch_xla.launch call it",
    fixable=True,
    changes_start="entry point",
    why="Distributed XLA launchers start each process by calling `_mp_fn(index)` in the script; "
    "one-device runs never call it.",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=""),
            _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=_ENTRY),
            findings=(Expected(9, 1, "`def _mp_fn(index)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import Trainer


            def main():
                Trainer(model=model, args=training_args).train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()


            if __name__ == "__main__":
                main()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from transformers import Seq2SeqTrainer as S2S


            def main():
                S2S(model=model, args=training_args).train()
            """,
            """
            from transformers import Seq2SeqTrainer as S2S


            def main():
                S2S(model=model, args=training_args).train()


            def _mp_fn(index):
                main()
            """,
            alias=True,
            findings=(Expected(8, 1, "`def _mp_fn(index)"),),
        ),
        invalid(
            """
            from transformers import Trainer


            def main(config="config.json"):
                Trainer(model=build(config), args=training_args).train()


            if __name__ == "__main__":
                main()
            """,
            """
            from transformers import Trainer


            def main(config="config.json"):
                Trainer(model=build(config), args=training_args).train()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                main()
            """,
            findings=(Expected(8, 1, "`def _mp_fn(index)"),),
        ),
    ),
)
