"""A Lightning 1.x script whose Trainer comes from the command line (issue 32, RWKV-LM's
``Trainer.from_argparse_args(args)``, launched by ``run.sh ... --accelerator gpu``): the
accelerator is the launch's to choose, so the finding (XLA822) names the launcher scripts
beside the script that pass one, and the flags they pass; scripts that name another file are
not read for it."""

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


def _findings(tmp_path: Path, files: dict[str, str], target: str) -> list[Finding]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    job = Job("check", target, RuleSelection())
    (report,) = run([(str(tmp_path / "train.py"), job)])
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
    assert "no launcher script beside it passes `--accelerator`" in finding.message, finding.message
