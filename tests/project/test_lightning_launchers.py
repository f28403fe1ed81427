"""A Lightning 1.x script whose Trainer comes from the command line (issue 32, RWKV-LM's
``Trainer.from_argparse_args(args)``, launched by ``run.sh ... --accelerator gpu``): the
accelerator is the launch's to choose, so the finding (XLA822) names the launcher scripts
that name the script and pass one (in its folder, the project's root, the ``scripts/`` folder of
each), and the flags they pass; scripts that name another file are not read for it.  A
``Trainer(accelerator=args.accelerator)`` whose flag's default the port changes is reported
when such a launcher passes a CUDA accelerator over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

TRAIN = """\
from argparse import ArgumentParser

import pytorch_lightning as pl
from pytorch_lightning import Trainer


class LitModel(pl.LightningModule):
    pass


if __name__ == "__main__":
    parser = Trainer.add_argparse_args(ArgumentParser())
    trainer = Trainer.from_argparse_args(parser.parse_args())
    trainer.fit(LitModel())
"""

RUN_SH = """\
#!/bin/bash
python train.py --micro_bsz 4 \\
    --accelerator gpu --devices 1 --precision bf16
python evaluate.py --accelerator cpu
"""


FLAG_TRAIN = """\
import argparse

import lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--accelerator", default="gpu")
args = parser.parse_args()


def main(model):
    trainer = L.Trainer(accelerator=args.accelerator, devices=1)
    trainer.fit(model)
"""


def _findings(tmp_path: Path, files: dict[str, str], target: str, script: str = "train.py") -> list[Finding]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    job = Job("check", target, RuleSelection())
    (report,) = run([(str(tmp_path / script), job)])
    return [f for f in report.findings if f.rule == "XLA822"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_launcher_that_passes_the_accelerator_is_named(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(tmp_path, {"train.py": TRAIN, "run.sh": RUN_SH}, target)
    assert finding.line == 13
    assert "run.sh passes `--accelerator gpu --devices 1 --precision bf16`" in finding.message, finding.message
    assert "the launch must pass `--accelerator tpu`" in finding.message
    assert ("removed it and `Trainer.add_argparse_args`" in finding.message) == (target == "2.9")


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_of_another_file_is_not_read_for_it(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(tmp_path, {"train.py": TRAIN, "eval.sh": "python evaluate.py --accelerator gpu\n"}, target)
    assert "no launcher script that names it passes `--accelerator`" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("launcher", "command"),
    [
        ("scripts/run.sh", "python src/train.py --accelerator gpu"),  # run from the root
        ("scripts/run.sh", "cd .. && python ../src/train.py --accelerator gpu"),  # a path from its own folder
        ("run.sh", "python src/train.py --accelerator=gpu"),
        ("src/scripts/run.sh", "python ../train.py --accelerator gpu"),
    ],
)
def test_launchers_in_the_usual_places_are_named(tmp_path: Path, target: str, launcher: str, command: str) -> None:
    files = {"pyproject.toml": "", "src/train.py": TRAIN, launcher: command + "\n"}
    (finding,) = _findings(tmp_path, files, target, "src/train.py")
    assert f"{launcher} passes `--accelerator" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_of_a_same_named_file_elsewhere_is_not_read(tmp_path: Path, target: str) -> None:
    files = {
        "pyproject.toml": "",
        "src/train.py": TRAIN,
        "scripts/run.sh": "python other/train.py --accelerator gpu\npython src/mytrain.py --accelerator gpu\n",
    }
    (finding,) = _findings(tmp_path, files, target, "src/train.py")
    assert "no launcher script that names it passes `--accelerator`" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_that_passes_a_cuda_accelerator_over_the_flag_is_reported(tmp_path: Path, target: str) -> None:
    files = {"train.py": FLAG_TRAIN, "scripts/train.sh": "python train.py --accelerator gpu --devices 8\n"}
    (finding,) = [f for f in _findings(tmp_path, files, target) if f.line == 11]
    assert finding.col == 25
    assert finding.message.startswith("`accelerator=args.accelerator` comes from the command line, and ")
    assert "scripts/train.sh passes `--accelerator gpu`" in finding.message, finding.message
    assert "the launch must pass `tpu`" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_that_passes_the_xla_accelerator_is_not_reported(tmp_path: Path, target: str) -> None:
    files = {"train.py": FLAG_TRAIN, "scripts/train.sh": "python train.py --accelerator tpu\n"}
    assert [f.line for f in _findings(tmp_path, files, target)] == ([] if target == "2.9" else [6])
