"""A Trainer subclass defined in another module of the project (LLaMA-Factory's
``CustomSeq2SeqTrainer`` in train/sft/trainer.py) is a Trainer: with transformers 5 and torch
>= 2.8 its default optimizer is the fused AdamW, which raises on XLA parameters at the first
step.  Where the file parses its TrainingArguments, the port sets optim="adamw_torch_xla" after
parsing (XLA801); where they come in as a parameter (built in a module the tool cannot follow),
the Trainer's construction is an error naming what to set.  Whether the run converts the whole
project or only the training script."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import TARGETS, RuleSelection, convert_source
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.fixtures import output_text

TRAINER = """\
from transformers import Seq2SeqTrainer


class CustomSeq2SeqTrainer(Seq2SeqTrainer):
    pass
"""

# A subclass of the subclass, in a third module: a Trainer too.  (A module that names no torch
# nor a library on it is not read at all: conversion.needs_parsing.)
LOGGING_TRAINER = """\
import torch

from pkg.trainer import CustomSeq2SeqTrainer


class LoggingTrainer(CustomSeq2SeqTrainer):
    pass
"""

TRAIN = """\
from transformers import HfArgumentParser, Seq2SeqTrainingArguments

from pkg.trainer import CustomSeq2SeqTrainer


def run(training_args):
    CustomSeq2SeqTrainer(model=build_model(), args=training_args, train_dataset=load()).train()


def main():
    (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()
    run(training_args)
"""

MAPPED = (
    "    (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()\n"
    '    if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", '
    '"paged_adamw_32bit"):\n'
    '        training_args.optim = "adamw_torch_xla"\n'
    "    run(training_args)\n"
)

# The arguments come in as a parameter: built in a module this file does not see.
WORKFLOW = """\
import torch

from pkg.logging_trainer import LoggingTrainer


def run_sft(model, dataset, training_args):
    trainer = LoggingTrainer(model=model, args=training_args, train_dataset=dataset)
    trainer.train()
"""


def _project(tmp_path: Path, target: str, run: str, *, with_trainer: bool = True) -> Project:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'sft'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    if with_trainer:
        (tmp_path / "pkg" / "trainer.py").write_text(TRAINER)
    (tmp_path / "pkg" / "logging_trainer.py").write_text(LOGGING_TRAINER)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "workflow.py").write_text(WORKFLOW)
    scripts = [tmp_path / "train.py", tmp_path / "workflow.py"]
    files = [*scripts, *(tmp_path / "pkg").glob("*.py")] if run == "whole" else scripts
    return Project(tmp_path, summarise_with(target, RuleSelection(), None), in_run=files)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("run", ["whole", "single"])
def test_a_trainer_subclass_of_another_module_gets_the_xla_optimizer_after_parsing(
    tmp_path: Path, target: str, run: str
) -> None:
    project = _project(tmp_path, target, run)
    conversion = convert_source(TRAIN, target=target, imports=project.imports_of(tmp_path / "train.py"))
    output = output_text(conversion)
    assert MAPPED in output
    assert [(f.rule, f.line, f.fixed) for f in conversion.findings if f.severity == "error"] == [("XLA801", 12, True)]
    again = convert_source(output, target=target, imports=project.imports_of(tmp_path / "train.py"))
    assert again.output == output


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("run", ["whole", "single"])
def test_a_trainer_handed_its_arguments_is_an_error_naming_the_optimizer(tmp_path: Path, target: str, run: str) -> None:
    project = _project(tmp_path, target, run)
    conversion = convert_source(WORKFLOW, target=target, imports=project.imports_of(tmp_path / "workflow.py"))
    assert conversion.output == WORKFLOW
    (finding,) = [f for f in conversion.findings if f.severity == "error"]
    assert (finding.rule, finding.line, finding.col, finding.fixed) == ("XLA801", 7, 15, False)
    assert finding.message.startswith(
        'set optim="adamw_torch_xla" on the TrainingArguments of this Trainer, where they are built or parsed '
        "(not in this file): its default optimizer, the fused AdamW of torch >= 2.8, raises on XLA parameters"
    )


def test_without_the_trainer_module_nothing_is_known_to_be_a_trainer(tmp_path: Path) -> None:
    """The negative control: pkg/trainer.py is not there, so neither class is known to be a
    Trainer (nor is the parse's result known to reach one), and nothing is said of the optimizer."""
    project = _project(tmp_path, "2.9", "whole", with_trainer=False)
    conversion = convert_source(WORKFLOW, imports=project.imports_of(tmp_path / "workflow.py"))
    assert conversion.output == WORKFLOW
    assert not [f for f in conversion.findings if f.rule == "XLA801"]
