"""XLA803 mp-fn-entry-point: a Hugging Face Trainer script gets ``def _mp_fn(index): main()`` right
after ``main`` when it has none: SageMaker's pytorchxla launcher (and ``torch_xla.launch``) starts
each process by calling it.  One-device runs never do, so the script runs as before."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER
from codemods.targets import ENTRY_FUNCTION

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

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


def _needs_entry(facts: Facts) -> bool:
    return bool(facts.huggingface.trainer_script) and facts.entry.mp_fn is None


@on_facts(
    MP_FN_ENTRY_POINT,
    nodes=lambda facts: [facts.entry.main] if _needs_entry(facts) and facts.entry.main is not None else [],
)
def _entry(
    ctx: Context[Facts], original: cst.FunctionDef, updated: cst.FunctionDef
) -> cst.FunctionDef | cst.FlattenSentinel[cst.BaseStatement]:
    """``main`` (a module-level function) with the entry point right after it."""
    import libcst as cst

    def build() -> cst.FlattenSentinel[cst.BaseStatement]:
        function = cst.parse_statement(f"def {ENTRY_FUNCTION}(index):\n    main()\n")
        return cst.FlattenSentinel([updated, function.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])])

    return ctx.fix_or_keep(
        updated,
        MP_FN_ENTRY_POINT,
        original,
        f"`def {ENTRY_FUNCTION}(index): main()` added: the distributed XLA launchers call it in each process",
        build,
        result=lambda added: added.nodes[1],
    )


@reports_facts(
    MP_FN_ENTRY_POINT,
    nodes=lambda facts: facts.huggingface.trainers[:1] if _needs_entry(facts) and facts.entry.main is None else [],
)
def _no_main(ctx: Context[Facts], original: cst.Call) -> str:
    """A Trainer script with no ``main()`` to call: reported at its first Trainer."""
    return (
        f"no `main()` to call: add `def {ENTRY_FUNCTION}(index):` that runs the training, for the "
        "distributed XLA launchers"
    )
