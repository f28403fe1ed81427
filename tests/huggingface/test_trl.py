"""TRL scripts: a config class of the project that subclasses a TRL config (a
TrainingArguments), read by TrlParser in another module and handed to SFTTrainer. With
transformers 5 and torch >= 2.8 its default optimizer is the fused AdamW, which raises on XLA
parameters at the first step: the port sets optim="adamw_torch_xla" after parsing (XLA801),
whether the run converts the whole project or only the training script."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import TARGETS, RuleSelection, convert_source
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.fixtures import output_text

CONFIG = """\
from dataclasses import dataclass, field

import trl


@dataclass
class RunConfig(trl.SFTConfig):
    chat_template: str = field(default=None)
"""

TRAIN = """\
from transformers import AutoModelForCausalLM
from trl import ModelConfig, SFTTrainer, TrlParser

from config import RunConfig


def main(training_args, model_args):
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = SFTTrainer(model=model, args=training_args, train_dataset=[{"text": "hello world"}] * 8)
    trainer.train()


if __name__ == "__main__":
    parser = TrlParser((RunConfig, ModelConfig))
    training_args, model_args = parser.parse_args_and_config()
    main(training_args, model_args)
"""

MAPPED = (
    "    training_args, model_args = parser.parse_args_and_config()\n"
    '    if training_args.optim in ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", '
    '"paged_adamw_32bit"):\n'
    '        training_args.optim = "adamw_torch_xla"\n'
    "    main(training_args, model_args)\n"
)


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("run", ["whole", "single"])
def test_a_trl_config_subclass_of_another_module_gets_the_xla_optimizer(tmp_path: Path, target: str, run: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'sft'\n")
    (tmp_path / "config.py").write_text(CONFIG)
    (tmp_path / "train.py").write_text(TRAIN)
    files = [tmp_path / "config.py", tmp_path / "train.py"] if run == "whole" else [tmp_path / "train.py"]
    project = Project(tmp_path, summarise_with(target, RuleSelection(), None), in_run=files)
    conversion = convert_source(TRAIN, target=target, imports=project.imports_of(tmp_path / "train.py"))
    output = output_text(conversion)
    assert MAPPED in output
    assert [f.rule for f in conversion.findings if f.severity == "error"] == ["XLA801"]
    again = convert_source(output, target=target, imports=project.imports_of(tmp_path / "train.py"))
    assert again.output == output


def test_without_a_config_of_the_project_the_trainer_is_reported(tmp_path: Path) -> None:
    """The negative control: the config module is not there (its class cannot be read), so the
    parse is not known to give TrainingArguments: the Trainer is reported instead."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'sft'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    project = Project(tmp_path, summarise_with("2.9", RuleSelection(), None), in_run=[tmp_path / "train.py"])
    conversion = convert_source(TRAIN, imports=project.imports_of(tmp_path / "train.py"))
    assert conversion.output == TRAIN
    (finding,) = [f for f in conversion.findings if f.severity == "error"]
    assert finding.rule == "XLA801"
    assert finding.message.startswith('set optim="adamw_torch_xla" on the TrainingArguments of this Trainer')
