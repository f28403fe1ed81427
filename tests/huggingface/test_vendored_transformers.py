"""A project that ships its own transformers (held-out list 19, PrefixTuning: a fork of 3.2.0 under
``transformers/src/transformers/``, installed with ``pip install -e``) whose ``TrainingArguments`` has
no ``optim`` field: XLA801 writes neither ``optim=`` (TypeError there) nor the mapping after parsing
(``training_args.optim`` raised AttributeError before any model was built), and says nothing of a
default fused AdamW (that Trainer builds transformers' own AdamW, plain torch code).  A copy that has
the field, and a project without a copy (the installed transformers), get XLA801 as before.
The executed part runs the converted script against the fork on torch_xla (PJRT_DEVICE=CPU); its
negative control is the same script converted as if the project shipped no copy, which crashes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods.engine.report import FileReport
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import RUN_TIMEOUT, converted_project, run_environment
from tests.support.projects import project_reports

TRAINING_ARGS = """\
from dataclasses import dataclass, field

import torch


@dataclass
class TrainingArguments:
    output_dir: str = field(default="out")
    learning_rate: float = field(default=0.1)
    {optim}

    @property
    def device(self):
        import torch_xla

        return torch_xla.device()
"""
FORK = {
    "transformers/src/transformers/__init__.py": (
        "from .hf_argparser import HfArgumentParser\n"
        "from .trainer import Trainer\n"
        "from .training_args import TrainingArguments\n"
    ),
    "transformers/src/transformers/hf_argparser.py": """\
import argparse
import dataclasses


class HfArgumentParser(argparse.ArgumentParser):
    def __init__(self, types):
        super().__init__()
        self.types = types
        for kind in types:
            for f in dataclasses.fields(kind):
                self.add_argument(f"--{f.name}", type=type(f.default), default=f.default)

    def parse_args_into_dataclasses(self):
        ns = self.parse_args()
        return tuple(kind(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(kind)}) for kind in self.types)
""",
    "transformers/src/transformers/trainer.py": """\
import torch

from .training_args import TrainingArguments


class Trainer:
    def __init__(self, model, args=None):
        self.args = args if args is not None else TrainingArguments("tmp_trainer")
        self.model = model.to(self.args.device)

    def train(self):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate)
        x = torch.ones(2, 4, device=self.args.device)
        losses = []
        for _ in range(3):
            loss = self.model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        print("TRAINED", self.args.device.type, losses[0] > losses[-1])
""",
}
TRAIN = """\
import torch
from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    parser = HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    torch.manual_seed(0)
    trainer = Trainer(model=torch.nn.Linear(4, 1), args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""
# The project's own Trainer subclass, built with arguments of its own when it is handed none.
TRAINER_COPY = """\
from transformers import Trainer, TrainingArguments


class PrefixTrainer(Trainer):
    def __init__(self, model, args=None):
        if args is None:
            args = TrainingArguments("tmp_trainer")
        super().__init__(model, args)
"""
OPTIM_FIELD = 'optim: str = field(default="adamw_torch_fused")'


def _files(fork: bool, optim: str = "") -> dict[str, str]:
    files = {"gpt2/train.py": TRAIN, "gpt2/trainer_copy.py": TRAINER_COPY}
    if fork:
        files |= FORK | {"transformers/src/transformers/training_args.py": TRAINING_ARGS.format(optim=optim)}
    return files


def _xla801(reports: dict[str, FileReport], name: str) -> list[tuple[int, str]]:
    report = reports[name]
    return [(f.line, f.message) for f in report.findings if f.rule == "XLA801"]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_shipped_transformers_without_optim_gets_no_optimizer_port(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path / "p", _files(fork=True), target, ["gpt2/train.py", "gpt2/trainer_copy.py"])
    assert _xla801(reports, "train.py") == []
    assert _xla801(reports, "trainer_copy.py") == []
    assert "optim" not in reports["train.py"].diff
    assert "optim" not in reports["trainer_copy.py"].diff


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_shipped_transformers_with_optim_and_the_installed_one_get_it(tmp_path: Path, target: str) -> None:
    for folder, files in (("with-field", _files(fork=True, optim=OPTIM_FIELD)), ("installed", _files(fork=False))):
        reports = project_reports(tmp_path / folder, files, target, ["gpt2/train.py", "gpt2/trainer_copy.py"])
        assert _xla801(reports, "train.py") == [
            (
                7,
                'training_args.optim = "adamw_torch_xla" after parsing, where the parsed value is an AdamW that does '
                'not run on XLA ("adamw_torch_fused", "adamw_torch_npu_fused", "adamw_apex_fused", '
                "\"paged_adamw_32bit\"); any other value, the command line's or a dataclass's, is kept: the sync-free "
                "AdamW for XLA computes the same (torch's fused AdamW, recent transformers' default with torch >= 2.8, "
                "raises on XLA parameters; the others need CUDA or an NPU)",
            )
        ], folder
        assert [line for line, _ in _xla801(reports, "trainer_copy.py")] == [7], folder


def test_single_file_run_names_no_trainer_holding_of_the_forks_arguments(tmp_path: Path) -> None:
    """The train script alone: the project's Trainer subclass builds arguments of the fork, which hold
    no optimizer choice, so no XLA003 says its Trainer is "set up for CUDA (the default fused AdamW...)"."""
    files = _files(fork=True) | {
        "gpt2/train.py": TRAIN.replace("Trainer, TrainingArguments", "TrainingArguments").replace(
            "from transformers", "from trainer_copy import PrefixTrainer as Trainer\nfrom transformers"
        )
    }
    reports = project_reports(tmp_path / "p", files, "2.9", ["gpt2/train.py"])
    messages = [f.message for f in reports["train.py"].findings if f.rule in ("XLA003", "XLA801")]
    assert not any("fused AdamW" in message for message in messages), messages


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    env = run_environment(PJRT_DEVICE="CPU", PYTHONPATH=str(folder / "transformers" / "src"))
    return subprocess.run(
        [sys.executable, "gpt2/train.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )


@pytest.mark.executed
def test_executed_the_converted_script_runs_against_the_fork_on_xla(tmp_path: Path) -> None:
    converted = converted_project(tmp_path / "fork", "proj", _files(fork=True))
    result = _run(converted)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "TRAINED xla True" in result.stdout
    # Negative control: the script converted as if the project shipped no copy gets the mapping after
    # parsing, which the fork's arguments cannot answer.
    unaware = converted_project(tmp_path / "installed", "proj", _files(fork=False))
    for name, text in FORK.items():
        (unaware / name).parent.mkdir(parents=True, exist_ok=True)
        (unaware / name).write_text(text)
    (unaware / "transformers/src/transformers/training_args.py").write_text(TRAINING_ARGS.format(optim=""))
    assert "training_args.optim" in (unaware / "gpt2/train.py").read_text()
    failed = _run(unaware)
    assert failed.returncode != 0
    assert "AttributeError: 'TrainingArguments' object has no attribute 'optim'" in failed.stderr


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_copy_without_a_root_marker_finds_the_fork_above_the_scripts_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """A copy of the repository without ``.git`` run on its script alone from the repository's folder:
    the root is the script's folder (gpt2/), and the fork is in the folder above it."""
    repo = tmp_path / "copy"
    for name, text in _files(fork=True).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    monkeypatch.chdir(repo)
    (report,) = run([("gpt2/train.py", Job("diff", target, RuleSelection()))], workers=1)
    assert [f for f in report.findings if f.rule == "XLA801"] == []
    assert "optim" not in report.diff
    # (a fork two folders above the script's folder's parent is no longer looked for)
    deeper = tmp_path / "deeper"
    (deeper / "a" / "b").mkdir(parents=True)
    (repo / "gpt2").rename(deeper / "a" / "b" / "gpt2")
    (repo / "transformers").rename(deeper / "transformers")
    monkeypatch.chdir(deeper / "a" / "b")
    (report,) = run([("gpt2/train.py", Job("diff", target, RuleSelection()))], workers=1)
    assert [f.line for f in report.findings if f.rule == "XLA801"] == [7]
