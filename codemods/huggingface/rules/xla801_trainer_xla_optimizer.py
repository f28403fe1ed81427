"""XLA801 trainer-xla-optimizer: ``TrainingArguments(...)`` gets ``optim="adamw_torch_xla"``;
arguments parsed with HfArgumentParser get it right after parsing, where they still hold an
AdamW that does not run on XLA (an explicit ``--optim`` of another optimizer is kept, and so is
torch's plain AdamW, ``"adamw_torch"``, which runs on XLA); the optimizers only CUDA runs are
reported.  A project that ships its own transformers whose TrainingArguments has no ``optim``
field (a fork of transformers < 4.x, project/vendored.py) gets nothing: its arguments hold no optimizer
choice, and the keyword or the attribute the port would write raises there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codemods.engine.hooks import of_types, on_facts, reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

XLA_OPTIMIZER = "adamw_torch_xla"
# Trainer optimizer names (transformers' OptimizerNames) whose AdamW does not run on XLA
# parameters but computes what adamw_torch_xla computes (AdamW with 32-bit states), so they
# become it: torch's fused AdamW (the default with torch >= 2.8: its step raises on XLA), and
# the kernels of other devices (checked in transformers' trainer_optimizer.py: bitsandbytes'
# AdamW with optim_bits=32, paged or not, needs CUDA).  "adamw_torch" is not one: transformers
# builds torch.optim.AdamW without fused=True for it, which runs on XLA, and the script's choice
# stays ("adamw_hf" is no OptimizerNames of transformers 5: TrainingArguments refuses it on any
# device; in 4.x it was transformers' own AdamW, plain torch code, which runs on XLA too).
XLA_ADAMW_FORMS = {
    "adamw_torch_fused": "torch's fused AdamW (it raises on XLA parameters)",
    "adamw_torch_npu_fused": "the Ascend NPU's fused AdamW (torch_npu)",
    "adamw_apex_fused": "apex's fused CUDA AdamW",
    "paged_adamw_32bit": "bitsandbytes' paged AdamW with 32-bit states (CUDA kernels and CUDA unified memory)",
}
TORCH_ADAMW = tuple(XLA_ADAMW_FORMS)
# Spellings of an AdamW that runs on XLA as it is: a TrainingArguments dataclass whose optim
# field defaults to one (or another optimizer that runs) needs no mapping after parsing.
RUNNING_ADAMW = ("adamw_torch", "adamw_hf", XLA_OPTIMIZER)

TRAINER_XLA_OPTIMIZER = Rule(
    code="XLA801",
    name="trainer-xla-optimizer",
    severity="error",
    summary='TrainingArguments use optim="adamw_torch_xla" (sync-free AdamW), in code or on the parsed arguments',
    fixable=True,
    why="With torch >= 2.8 the default optimizer of recent transformers' Trainer is fused AdamW, which raises on XLA tensors; "
    "adamw_torch_xla is the same AdamW, written for XLA (no host sync in the step). The other AdamW spellings "
    "that do not run on XLA but compute the same become it too (adamw_torch_npu_fused, adamw_apex_fused, and "
    "bitsandbytes' paged_adamw_32bit: 32-bit states, CUDA kernels): as a literal, after HfArgumentParser parses "
    "them, or where a variable or flag is handed to `optim=` (`optim=optim` maps those spellings and keeps any "
    'other choice). An explicit "adamw_torch" (an `optim=` literal, or the default of a TrainingArguments '
    "dataclass's field, which then needs no mapping after parsing) is torch's AdamW without fused=True: it runs "
    "on XLA and stays. bitsandbytes' other optimizers (8-bit states, Lion, AdEMAMix, its RMSprop) need CUDA and "
    "no optimizer of the Trainer computes the same on XLA: written in code (an `optim=` literal, the default "
    "of the parameter handed to it, a TrainingArguments dataclass's field default) they are an error to "
    "decide by hand. TRL's trainers (SFTTrainer, DPOTrainer, GRPOTrainer, ...) are Trainers, and its configs "
    "(SFTConfig, DPOConfig, GRPOConfig, ...) TrainingArguments with the same default: they are ported the same "
    "way, built in code or parsed by TrlParser (`parse_args_and_config`), and so is a subclass of one defined in "
    "another module of the project (`class RunConfig(trl.SFTConfig)` in config.py). So is a Trainer subclass of "
    "another module of the project (`class CustomSeq2SeqTrainer(Seq2SeqTrainer)` in sft/trainer.py): arguments "
    "parsed in the file that builds it (also `HfArgumentParser(...).parse_args_into_dataclasses()` in one "
    "expression) get the mapping after parsing; a Trainer handed its arguments from elsewhere (a parameter) is an "
    'error at its construction: set optim="adamw_torch_xla" where they are built or parsed. TRL\'s `PPOConfig` is '
    "two classes: up to TRL 0.11 a dataclass without `optim` (the keyword raises TypeError) read by a PPOTrainer "
    "that is no Trainer and builds a torch Adam, which runs on XLA; from 0.12 a TrainingArguments. Its keywords "
    "tell them apart (`ppo_epochs`, `log_with`... / `output_dir`, `num_ppo_epochs`...): the old one gets "
    "nothing, the new one gets optim=, and one whose keywords fit both is an error to decide by hand. A "
    "project that ships its own copy of transformers (`transformers/src/transformers/`, a fork it installs with "
    "`pip install -e`) whose `TrainingArguments` has no `optim` field (transformers < 4.x: the Trainer builds "
    "transformers' own AdamW, plain torch code that runs on XLA) gets nothing: `optim=` raises TypeError there "
    "and reading `args.optim` AttributeError, so neither is written, in the file that builds or parses the "
    "arguments nor in one handed them.",
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
        valid(
            """
            from trl import DDPOConfig, DDPOTrainer

            config = DDPOConfig(num_epochs=2)
            DDPOTrainer(config, reward_fn, prompt_fn, pipeline).train()
            """,
            note="trl-diffusion-trainer-is-no-trainer",
        ),
        valid(
            """
            from trl import PPOConfig, PPOTrainer

            config = PPOConfig(model_name="gpt2", learning_rate=1.41e-5, ppo_epochs=4, mini_batch_size=8)
            trainer = PPOTrainer(config=config, model=model, ref_model=ref_model, tokenizer=tokenizer, dataset=data)
            """,
            note="trl-0.11-ppo-config-has-no-optim",
        ),
        valid(
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim="adamw_torch", dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            note="plain-torch-adamw-runs",
        ),
        valid(
            """
            from dataclasses import dataclass, field

            import transformers


            @dataclass
            class TrainingArguments(transformers.TrainingArguments):
                optim: str = field(default="adamw_torch")


            def _mp_fn(index):
                parser = transformers.HfArgumentParser((TrainingArguments,))
                (training_args,) = parser.parse_args_into_dataclasses()
                extra = TrainingArguments(output_dir="out", dataloader_num_workers=2)
                transformers.Trainer(model=model, args=training_args, train_dataset=data).train()
            """,
            note="dataclass-default-plain-adamw",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import trl as t

            config = t.PPOConfig(output_dir="out", num_ppo_epochs=4, dataloader_num_workers=2)
            """,
            """
            import trl as t

            config = t.PPOConfig(output_dir="out", num_ppo_epochs=4, dataloader_num_workers=2, optim="adamw_torch_xla")
            """,
            note="trl-0.12-ppo-config-is-training-arguments",
            alias=True,
            findings=(Expected(3, 10, 'optim="adamw_torch_xla" added'),),
        ),
        *(
            invalid(
                """
                from trl import PPOConfig

                config = PPOConfig(learning_rate=1e-5, seed=0)
                """,
                target=target,
                note=f"trl-ppo-config-of-either-version-{target}",
                findings=(
                    Expected(
                        3,
                        10,
                        "TRL's PPOConfig is a TrainingArguments only from TRL 0.12 (with the default fused AdamW, which "
                        'raises on XLA): there, add optim="adamw_torch_xla"; up to 0.11 it is a dataclass without optim',
                    ),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()
                Seq2SeqTrainer(model=model, args=training_args).train()
            """,
            """
            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()
                if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", "paged_adamw_32bit"):
                    training_args.optim = "adamw_torch_xla"
                Seq2SeqTrainer(model=model, args=training_args).train()


            def _mp_fn(index):
                main()
            """,
            note="parser-built-inline",
            findings=(Expected(6, 5, 'training_args.optim = "adamw_torch_xla" after parsing'),),
        ),
        invalid(
            """
            from trl import SFTConfig, SFTTrainer

            args = SFTConfig(output_dir="out", dataloader_num_workers=2)
            SFTTrainer(model=model, args=args, train_dataset=data).train()
            """,
            """
            from trl import SFTConfig, SFTTrainer

            args = SFTConfig(output_dir="out", dataloader_num_workers=2, optim="adamw_torch_xla")
            SFTTrainer(model=model, args=args, train_dataset=data).train()
            """,
            note="trl-config",
            findings=(Expected(3, 8, 'optim="adamw_torch_xla" added'),),
        ),
        invalid(
            """
            from dataclasses import dataclass

            import trl as t


            @dataclass
            class RunConfig(t.GRPOConfig):
                reward_scale: float = 1.0


            parser = t.TrlParser((RunConfig, t.ModelConfig))
            training_args, model_args = parser.parse_args_and_config()
            t.GRPOTrainer(model=model_args.model_name_or_path, reward_funcs=reward, args=training_args).train()
            """,
            """
            from dataclasses import dataclass

            import trl as t


            @dataclass
            class RunConfig(t.GRPOConfig):
                reward_scale: float = 1.0


            parser = t.TrlParser((RunConfig, t.ModelConfig))
            training_args, model_args = parser.parse_args_and_config()
            if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", "paged_adamw_32bit"):
                training_args.optim = "adamw_torch_xla"
            t.GRPOTrainer(model=model_args.model_name_or_path, reward_funcs=reward, args=training_args).train()
            """,
            target="sagemaker",
            note="trl-parser-config-subclass",
            alias=True,
            findings=(Expected(13, 1, 'training_args.optim = "adamw_torch_xla" after parsing'),),
        ),
        invalid(
            """
            from transformers import Trainer, TrainingArguments


            def train(model, dataset, optim="adamw_torch_fused"):
                args = TrainingArguments(output_dir="out", optim=optim, dataloader_num_workers=2)
                Trainer(model=model, args=args, train_dataset=dataset).train()
            """,
            """
            from transformers import Trainer, TrainingArguments


            def train(model, dataset, optim="adamw_torch_fused"):
                args = TrainingArguments(output_dir="out", optim="adamw_torch_xla" if optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", "paged_adamw_32bit") else optim, dataloader_num_workers=2)
                Trainer(model=model, args=args, train_dataset=dataset).train()
            """,
            note="optim-from-a-parameter",
            findings=(
                Expected(
                    5,
                    54,
                    'where `optim` holds an AdamW that does not run on XLA ("adamw_torch_fused", "adamw_torch_npu_fused"',
                ),
            ),
        ),
        invalid(
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim="paged_adamw_32bit", dataloader_num_workers=2)
            """,
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            note="paged-32-bit-adamw",
            alias=True,
            findings=(
                Expected(
                    3,
                    8,
                    'optim="paged_adamw_32bit" -> "adamw_torch_xla": bitsandbytes\' paged AdamW with 32-bit states '
                    "(CUDA kernels and CUDA unified memory) does not run on XLA; the sync-free AdamW for XLA computes "
                    "the same",
                ),
            ),
        ),
        *(
            invalid(
                """
                from dataclasses import dataclass, field

                import transformers


                @dataclass
                class TrainingArguments(transformers.TrainingArguments):
                    optim: str = field(default="paged_adamw_8bit")


                args = transformers.TrainingArguments(output_dir="out", optim="lion_32bit", dataloader_num_workers=2)
                """,
                target=target,
                note=f"cuda-only-optimizers-{target}",
                findings=(
                    Expected(
                        8,
                        32,
                        'optim "paged_adamw_8bit" is a bitsandbytes optimizer: its CUDA kernels do not run on XLA '
                        "parameters (the Trainer's first step raises), and no optimizer of the Trainer computes the "
                        'same on XLA: use "adamw_torch_xla"',
                    ),
                    Expected(11, 63, 'optim "lion_32bit" is a bitsandbytes optimizer'),
                ),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch_fused', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch_xla', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            alias=True,
            findings=(
                Expected(
                    3,
                    8,
                    "optim='adamw_torch_fused' -> \"adamw_torch_xla\": torch's fused AdamW (it raises on XLA "
                    "parameters) does not run on XLA",
                ),
            ),
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
                if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", "paged_adamw_32bit"):
                    training_args.optim = "adamw_torch_xla"
                trainer = Seq2SeqTrainer(model=model, args=training_args)
                trainer.train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()
            """,
            note="parser",
            findings=(
                Expected(
                    12,
                    5,
                    'training_args.optim = "adamw_torch_xla" after parsing, where the parsed value is an AdamW that does '
                    "not run on XLA",
                ),
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
                    if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", "paged_adamw_32bit"):
                        training_args.optim = "adamw_torch_xla"
                    Trainer(model=model, args=training_args).train()
                """,
                target=target,
                note=f"script-dataclass-default-kept-{target}",
                findings=(Expected(14, 5, "any other value, the command line's or a dataclass's, is kept"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)


@on_facts(TRAINER_XLA_OPTIMIZER, nodes=lambda facts: set(facts.huggingface.trainers))
def _trainer(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """A Trainer in a file that neither builds nor parses its TrainingArguments."""
    if not ctx.facts.huggingface.builds_arguments and ctx.facts.huggingface.arguments_without_optim is None:
        ctx.report(
            TRAINER_XLA_OPTIMIZER,
            original,
            f'set optim="{XLA_OPTIMIZER}" on the TrainingArguments of this Trainer, where they are built or '
            "parsed (not in this file): its default optimizer, the fused AdamW of torch >= 2.8, raises on XLA "
            "parameters at the first step",
        )
    return updated


@on_facts(TRAINER_XLA_OPTIMIZER, nodes=lambda facts: facts.huggingface.training_arguments)
def _training_arguments(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``TrainingArguments(...)``: optim= added, replaced, mapped, or reported."""
    import libcst as cst

    from codemods.engine.nodes import quoted_like, string_value, with_keyword

    if ctx.facts.huggingface.arguments_without_optim is not None:
        return updated  # (the project's transformers: no optim field, no choice to port)
    choice = ctx.facts.huggingface.training_arguments[original]
    if choice.action == "ppo":
        ctx.report(
            TRAINER_XLA_OPTIMIZER,
            original,
            "TRL's PPOConfig is a TrainingArguments only from TRL 0.12 (with the default fused AdamW, which "
            f'raises on XLA): there, add optim="{XLA_OPTIMIZER}"; up to 0.11 it is a dataclass without optim '
            "(the keyword raises TypeError) and its PPOTrainer builds a torch Adam, which runs on XLA",
        )
        return updated
    if choice.action == "report":
        ctx.report(
            TRAINER_XLA_OPTIMIZER,
            original,
            f'its keywords come from **kwargs: make sure they set optim="{XLA_OPTIMIZER}"',
        )
        return updated
    if choice.action == "map":
        assert choice.value is not None
        return _map_optim(ctx, original, updated, choice.value)
    if choice.action == "replace":
        value = choice.value
        assert value is not None
        new_args = [
            a.with_changes(value=quoted_like(value, XLA_OPTIMIZER)) if a.keyword and a.keyword.value == "optim" else a
            for a in updated.args
        ]
        message = (
            f'optim={ctx.code(value)} -> "{XLA_OPTIMIZER}": {XLA_ADAMW_FORMS[string_value(value) or ""]} '
            "does not run on XLA; the sync-free AdamW for XLA computes the same"
        )
    else:
        new_args = with_keyword(list(updated.args), "optim", cst.SimpleString(f'"{XLA_OPTIMIZER}"'))
        message = (
            f'optim="{XLA_OPTIMIZER}" added: the sync-free AdamW (with torch >= 2.8 the default fused AdamW '
            "raises on XLA)"
        )
    return ctx.fix_or_keep(
        updated, TRAINER_XLA_OPTIMIZER, original, message, lambda: updated.with_changes(args=new_args)
    )


def _map_optim(
    ctx: Context[Facts], original: cst.Call, updated: cst.Call, value: cst.BaseExpression
) -> cst.BaseExpression:
    """``optim=optim`` (a variable, a flag): the AdamW spellings that do not run on XLA
    become adamw_torch_xla where it is given; any other choice is kept."""
    import libcst as cst

    from codemods.engine.nodes import call_args

    code = ctx.code(value)
    choices = ", ".join(f'"{o}"' for o in TORCH_ADAMW)
    mapped = cst.parse_expression(f'"{XLA_OPTIMIZER}" if {code} in ({choices}) else {code}')
    new_args = [a.with_changes(value=mapped) if a.keyword and a.keyword.value == "optim" else a for a in updated.args]
    return ctx.fix_or_keep(
        updated,
        TRAINER_XLA_OPTIMIZER,
        original,
        f"optim={code} -> {{new}}: where `{code}` holds an AdamW that does not run on XLA ({choices}: torch's "
        "fused AdamW raises on XLA parameters, the others need CUDA or an NPU), the sync-free AdamW for XLA "
        "computes the same; any other choice is kept",
        lambda: updated.with_changes(args=new_args),
        result=lambda call: call_args(call)[1]["optim"].value,
    )


@reports_facts(TRAINER_XLA_OPTIMIZER, nodes=lambda facts: facts.huggingface.cuda_optimizers)
def _cuda_optimizer(ctx: Context[Facts], original: cst.SimpleString) -> str:
    return (
        f'optim "{ctx.facts.huggingface.cuda_optimizers[original]}" is a bitsandbytes optimizer: its CUDA kernels do '
        "not run on XLA parameters (the Trainer's first step raises), and no optimizer of the Trainer computes the "
        f'same on XLA: use "{XLA_OPTIMIZER}" (AdamW with 32-bit states: more memory, and not the same updates)'
    )


@on_facts(
    TRAINER_XLA_OPTIMIZER,
    nodes=lambda facts: of_types(
        {
            parsed.anchor: parsed
            for parsed in facts.huggingface.parsed_arguments
            if facts.huggingface.arguments_without_optim is None
        },
        "SimpleStatementLine If",
    ),
)
def _after_parse(
    ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode
) -> cst.CSTNode | cst.FlattenSentinel[Any]:
    """The statement that parses TrainingArguments with HfArgumentParser: followed by one
    that sets optim= where it holds an AdamW that does not run on XLA."""
    import libcst as cst

    name = next(p for p in reversed(ctx.facts.huggingface.parsed_arguments) if p.anchor is original).name
    choices = ", ".join(f'"{o}"' for o in TORCH_ADAMW)
    statement = cst.parse_statement(f'if {name}.optim in ({choices}):\n    {name}.optim = "{XLA_OPTIMIZER}"\n')
    new = ctx.fix(
        TRAINER_XLA_OPTIMIZER,
        original,
        f'{name}.optim = "{XLA_OPTIMIZER}" after parsing, where the parsed value is an AdamW that does not run '
        f"on XLA ({choices}); any other value, the command line's or a dataclass's, is kept: the sync-free AdamW "
        "for XLA computes the same (torch's fused AdamW, recent transformers' default with torch >= 2.8, raises on XLA "
        "parameters; the others need CUDA or an NPU)",
        lambda: statement,
        result=lambda node: node,
    )
    if new is None:
        return updated
    return cst.FlattenSentinel([updated, new])
