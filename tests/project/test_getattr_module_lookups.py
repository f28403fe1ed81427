"""A script that looks a class up in a project module it imports whole, by a name known only at run
time (``TrainerClass = getattr(trainers, config.trainer)``, direct-preference-optimization's train.py;
``model = getattr(model, args.model)(adj)``, vgae_pytorch's).

A single-file run of the first says (XLA003, at the import) that the module's training loop keeps its
plain step: the lookup may run any class of the module, as ``trainers.__dict__[name]`` does; a run on
the project ports that loop.  The second, whose modules name no device (a model class, a module of
constants), picks no device at all: it is left unchanged with XLA005, in both kinds of run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import project_reports, script_findings

TARGETS = ["2.9", "sagemaker"]
BARRIER = {"2.9": "torch_xla.sync()", "sagemaker": "xm.mark_step()"}

TRAINERS = """\
import torch


class BasicTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self):
        for step in range(10):
            self.optimizer.zero_grad()
            self.model(torch.rand(2, 4)).sum().backward()
            self.optimizer.step()


class EvalOnly:
    def __init__(self, model):
        self.model = model
"""
TRAIN = """\
import sys

import torch
import trainers


def main(name):
    TrainerClass = getattr(trainers, name)
    model = torch.nn.Linear(4, 2).cuda()
    trainer = TrainerClass(model)
    trainer.train()


if __name__ == "__main__":
    main(sys.argv[1])
"""
FILES = {"trainers.py": TRAINERS, "train.py": TRAIN}
# Its classes train nothing: nothing to say.
IDLE = TRAINERS.split("    def train(self):")[0]


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "train",
    [
        TRAIN,
        TRAIN.replace("import trainers\n", "import trainers as T\n").replace("(trainers,", "(T,"),  # alias
        TRAIN.replace("getattr(trainers, name)", 'getattr(trainers, "BasicTrainer")'),  # a constant name
    ],
    ids=["run-time-name", "alias", "constant-name"],
)
def test_a_loop_of_a_class_looked_up_by_getattr_is_an_error_at_the_import(
    tmp_path: Path, target: str, train: str
) -> None:
    found = script_findings(tmp_path, {**FILES, "train.py": train}, target, "XLA003")
    assert [line for line, _ in found] == [4], found
    (message,) = [message for _, message in found]
    assert "trainers.py, which this run does not convert" in message, message
    assert "`BasicTrainer` has `self.optimizer.step()` (line 13)" in message, message
    assert "without the step barrier" in message and "converting the project (`xla-codemod convert .`" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_whose_classes_train_nothing_is_no_error(tmp_path: Path, target: str) -> None:
    assert script_findings(tmp_path, {**FILES, "trainers.py": IDLE}, target, "XLA003") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_constant_name_uses_only_that_class(tmp_path: Path, target: str) -> None:
    train = TRAIN.replace("getattr(trainers, name)", 'getattr(trainers, "EvalOnly")')
    assert script_findings(tmp_path, {**FILES, "train.py": train}, target, "XLA003") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_on_the_project_ports_the_loop_the_lookup_reaches(tmp_path: Path, target: str) -> None:
    reports = project_reports(tmp_path, FILES, target, list(FILES))
    assert not any(f.rule == "XLA003" for f in reports["train.py"].findings)
    ported = reports["trainers.py"]
    step = "-            self.optimizer.step()\n+            xm.optimizer_step(self.optimizer)\n"
    assert f"{step}+            {BARRIER[target]}\n" in ported.diff, ported.diff
    assert sorted((f.rule, f.line, f.fixed) for f in ported.findings if f.severity == "error") == [
        ("XLA201", 13, True),
        ("XLA301", 10, True),
    ]


# -- a script that picks no device (vgae_pytorch) ------------------------------------------------

MODEL = """\
import torch
import torch.nn as nn

import args


class GAE(nn.Module):
    def __init__(self, adj):
        super().__init__()
        self.adj = adj
        self.fc = nn.Linear(args.input_dim, 2)

    def forward(self, x):
        return self.adj @ self.fc(x)
"""
ARGS = """\
model = "GAE"
input_dim = 4
learning_rate = 0.01
"""
GAE_TRAIN = """\
import torch

import args
import model

model = getattr(model, args.model)(torch.eye(3))
optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
for epoch in range(10):
    optimizer.zero_grad()
    model(torch.rand(3, 4)).sum().backward()
    optimizer.step()
"""
GAE_FILES = {"args.py": ARGS, "model.py": MODEL, "train.py": GAE_TRAIN}
# The class bound first, then built (``Net = getattr(model, args.model)``).
TWO_STEPS = (
    GAE_TRAIN.replace(
        "model = getattr(model, args.model)(torch.eye(3))\n",
        "Net = getattr(model, args.model)\nnet = Net(torch.eye(3))\n",
    )
    .replace("model(torch.rand", "net(torch.rand")
    .replace("(model.parameters()", "(net.parameters()")
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train,line", [(GAE_TRAIN, 8), (TWO_STEPS, 9)], ids=["inline", "two-steps"])
@pytest.mark.parametrize("whole", [True, False], ids=["whole", "single"])
def test_a_script_whose_modules_name_no_device_is_left_unchanged(
    tmp_path: Path, target: str, train: str, line: int, whole: bool
) -> None:
    reports = project_reports(
        tmp_path, {**GAE_FILES, "train.py": train}, target, list(GAE_FILES) if whole else ["train.py"]
    )
    report = reports["train.py"]
    assert not report.diff, report.diff
    assert [(f.rule, f.line) for f in report.findings] == [("XLA005", line)], report.findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "module,text",
    [
        ("args.py", ARGS + 'device = "cuda"\n'),  # the constants name a device
        ("model.py", MODEL.replace("nn.Linear(args.input_dim, 2)", "nn.Linear(args.input_dim, 2).cuda()")),
    ],
    ids=["constants-name-a-device", "model-module-moves"],
)
def test_a_module_imported_whole_that_names_a_device_may_place_the_model(
    tmp_path: Path, target: str, module: str, text: str
) -> None:
    reports = project_reports(tmp_path, {**GAE_FILES, module: text}, target, list(GAE_FILES))
    report = reports["train.py"]
    assert not any(f.rule == "XLA005" for f in report.findings)
    assert "optimizer_step" in report.diff
