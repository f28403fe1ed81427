"""XLA806 input-workers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


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


def _left_at_zero(facts: Facts) -> set[cst.CSTNode]:
    """The calls, and the statements that parse arguments (XLA801 puts a statement after
    those: this rule comes first in the concern's RULES, so it is reported on them)."""
    anchors = {id(parsed.anchor) for parsed in facts.huggingface.parsed_arguments}
    return {
        node
        for node in facts.huggingface.default_workers
        if type(node).__name__ == "Call"
        or (id(node) in anchors and type(node).__name__ in ("SimpleStatementLine", "If"))
    }


@reports_facts(INPUT_WORKERS, nodes=_left_at_zero)
def _workers(ctx: Context[Facts], original: cst.CSTNode) -> str:
    """A TrainingArguments call, or the statement that parses them, that leaves
    dataloader_num_workers at 0."""
    return (
        "dataloader_num_workers is left at 0: batches are prepared between steps while the device "
        "waits; use at least the number of devices per host (and fewer than its CPUs)"
        + (" (--dataloader_num_workers N)" if type(original).__name__ != "Call" else "")
    )


@reports_facts(INPUT_WORKERS, nodes=lambda facts: set(facts.huggingface.default_preprocessing_workers))
def _preprocessing(ctx: Context[Facts], original: cst.AnnAssign) -> str:
    return (
        "preprocessing_num_workers defaults to None: datasets.map runs in one process; "
        "pass --preprocessing_num_workers N"
    )
