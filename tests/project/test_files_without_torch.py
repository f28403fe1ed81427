"""Files that never name torch but train (issue 32): a trainer whose model and optimizer come
from another module (``loss.backward(); self.opt.step()``), and the script whose loop calls it
(SPADE's trainer.py and train.py).  The quick skip before parsing reads them all the same: a run
on the whole project gives the loop its step barrier, a single-file run of the script reports
the CUDA code of the modules it uses (XLA003) and adds the barrier; a file without torch that
takes no training step and imports none stays unparsed.  Executed: ported, the steps run on XLA;
without the barrier nothing ever executes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from codemods.conversion import ConversionError
from codemods.engine.rule import RuleSelection as Selection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.runner import Job, run
from tests.support.executed import XLA_RUNNER, convert_folder, parse_run, run_command, run_environment

TARGETS = ["2.9", "sagemaker"]
BARRIER = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}

MODEL = """\
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self, use_gpu):
        super().__init__()
        self.use_gpu = use_gpu
        self.net = nn.Linear(4, 1)
        if use_gpu:
            self.net.cuda()

    def forward(self, batch):
        x = batch["x"]
        if self.use_gpu:
            x = x.cuda()
        return self.net(x).pow(2).mean()

    def make_optimizer(self, lr):
        return torch.optim.SGD(self.net.parameters(), lr=lr)


def make_batches(n):
    return [{"x": torch.randn(8, 4)} for _ in range(n)]
"""
TRAINER = """\
from model import Pair


class Trainer:
    def __init__(self, use_gpu):
        self.model = Pair(use_gpu)
        self.opt = self.model.make_optimizer(1e-2)

    def run_one_step(self, batch):
        self.opt.zero_grad()
        loss = self.model(batch)
        loss.backward()
        self.opt.step()
        self.loss = loss
"""
TRAIN = """\
from model import make_batches
from trainer import Trainer

batches = make_batches(5)
trainer = Trainer(use_gpu=True)
for epoch in range(2):
    for batch in batches:
        trainer.run_one_step(batch)
print("done")
"""
FILES = {"model.py": MODEL, "trainer.py": TRAINER, "train.py": TRAIN}


def _project(folder: Path, files: dict[str, str]) -> Path:
    (folder / "pyproject.toml").write_text("[project]\nname = 'notorch'\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _converted(folder: Path, names: list[str], target: str) -> dict[str, tuple[str, list[tuple[str, int]]]]:
    """Each named file of the run: its diff, and its (rule, line) errors and warnings."""
    job = Job("diff", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {
        Path(report.path).name: (report.diff, [(f.rule, f.line) for f in report.findings if f.severity != "info"])
        for report in reports
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_in_a_file_without_torch_gets_its_barrier_in_a_run_on_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(_project(tmp_path, FILES))
    converted = _converted(tmp_path, list(FILES), target)
    train, train_findings = converted["train.py"]
    assert f"         trainer.run_one_step(batch)\n+        {BARRIER[target]}\n" in train
    assert train_findings == [("XLA301", 7)]  # the barrier added
    # The trainer is read (its step is the loop's: no XLA306) and the model ported.
    assert converted["trainer.py"][1] == []
    assert "+            self.net.to(" in converted["model.py"][0]


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_loop_reports_the_modules_and_adds_the_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(_project(tmp_path, FILES))
    train, findings = _converted(tmp_path, ["train.py"], target)["train.py"]
    assert f"+        {BARRIER[target]}" in train
    assert findings == [("XLA003", 2), ("XLA301", 7)]


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_of_the_trainer_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """Alone in its run, the trainer's step has no loop that drives it (XLA306) and its model
    module holds CUDA code (XLA003): the file is read, not skipped."""
    monkeypatch.chdir(_project(tmp_path, FILES))
    _, findings = _converted(tmp_path, ["trainer.py"], target)["trainer.py"]
    assert {rule for rule, _ in findings} >= {"XLA003"}, findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_file_without_torch_that_takes_no_step_stays_unparsed(tmp_path: Path, target: str) -> None:
    """A file that names no torch, takes no training step and imports no module that does is
    skipped before parsing, as before (text that does not parse shows it was never parsed): an
    environment's ``env.step(action)`` is no optimizer step."""
    files = {**FILES, "report.py": "from model import make_batches\n\nenv.step(action)\ndef summary(:\n"}
    project = Project(
        _project(tmp_path, files),
        summarise_with(target, Selection(), None),
        in_run=[tmp_path / name for name in files],
    )
    source = (tmp_path / "report.py").read_bytes()
    conversion = convert_source(source, target=target, imports=project.imports_of(tmp_path / "report.py"))
    assert conversion.output == source and conversion.findings == []
    # With a step in it, the same file is parsed.
    with pytest.raises(ConversionError):
        convert_source(source + b"loss.backward()\n", target=target, imports=project.imports_of(tmp_path / "report.py"))


def _ran(folder: Path, selection: RuleSelection | None = None) -> tuple[str, int]:
    folder.mkdir()
    _project(folder, FILES)
    convert_folder(folder, selection)
    output = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    return (folder / "train.py").read_text(), parse_run(output, folder).executions


@pytest.mark.executed
def test_the_ported_loop_without_torch_runs_its_steps_on_xla(tmp_path: Path) -> None:
    train, executions = _ran(tmp_path / "ported")
    assert "torch_xla.sync()" in train
    assert executions >= 10, executions


@pytest.mark.executed
def test_without_the_barrier_the_steps_never_execute(tmp_path: Path) -> None:
    """The negative control: the same project without the loop's barrier (XLA301 off, as the
    skip left it) runs all its steps and executes no graph: everything stays pending."""
    train, executions = _ran(tmp_path / "no-barrier", RuleSelection(ignore=("XLA301",)))
    assert "torch_xla" not in train
    assert executions == 0
