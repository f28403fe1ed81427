"""The device obligations across the files of a project (XLA112: the device a model goes to
comes from a function of another module), run as `xla-codemod lint FOLDER` runs them, for both
targets; and what a single-file run says of the same code."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import FileReport
from codemods.engine.rule import RuleSelection
from codemods.files import discover
from codemods.runner import Job, run
from codemods.targets import TARGETS
from tests.support.rule_cases import RUN_CASES

_DEVICE_RUNS = [case for case in RUN_CASES if case[0].startswith("XLA")]


def lint_folder(folder: Path, target: str) -> list[FileReport]:
    job = Job("lint", target, RuleSelection())
    return run([(str(path), job) for path in discover((str(folder),))])


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("rule,kind,files", _DEVICE_RUNS, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(_DEVICE_RUNS)])
def test_run_case(
    rule: str, kind: str, files: dict[str, str], target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # findings name files relative to the current folder
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    reports = lint_folder(tmp_path, target)
    assert not any(r.error for r in reports), reports
    fired = [(r.path, f) for r in reports for f in r.findings if f.rule == rule]
    assert bool(fired) == (kind != "negative"), fired
    for path, finding in fired:  # at the move in the training script, naming the helper's file
        assert path.endswith("train.py") and (finding.line, finding.col) == (6, 13)
        assert "`pick_device()` in helpers.py, which returns" in finding.message or "`pd()` in helpers.py" in finding.message


def test_a_single_file_run_says_the_device_comes_from_a_module_it_does_not_read() -> None:
    source = dict(next(files for rule, kind, files in _DEVICE_RUNS if kind == "positive"))["train.py"]
    conversion = convert_source(textwrap.dedent(source).lstrip("\n"))
    messages = [f.message for f in conversion.findings if f.rule == "XLA003"]
    assert messages == [
        "the device comes from `pick_device` in another module of the project that this run does not read: "
        "run the tool on the project folder to follow it, and check it returns the XLA device"
    ]


_EVALUATE = '''
import torch

def metrics(model, loader):
    hits = 0
    for user, item in loader:
        user, item = user.cuda(), item.cuda()
        hits += model(user, item).sum().item()
    return hits
'''
_MAIN = '''
import torch
import evaluate

model = torch.nn.Bilinear(4, 4, 1).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for user, item, label in train_loader:
    user, item, label = user.cuda(), item.cuda(), label.cuda()
    loss = (model(user, item) - label).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
hits = evaluate.metrics(model, test_loader)
'''


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_model_handed_to_an_unconverted_evaluation_function_is_reported(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's F4b (NCF): converting main.py alone leaves evaluate.py's batches on CUDA;
    converting the folder converts both, and nothing is said."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evaluate.py").write_text(_EVALUATE.lstrip("\n"))
    (tmp_path / "main.py").write_text(_MAIN.lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    alone = [f for report in run([("main.py", job)]) for f in report.findings if f.rule == "XLA116"]
    assert [(f.line, f.col) for f in alone] == [(12, 8)]
    assert "goes to `evaluate.metrics` in evaluate.py, which feeds it batches and still needs converting" in alone[0].message
    folder = [f for report in lint_folder(tmp_path, target) for f in report.findings if f.rule == "XLA116"]
    assert folder == []


_EXP_BASIC = '''
import torch

class Exp:
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()

    def _acquire_device(self):
        if self.args.use_gpu:
            return torch.device("cuda:{}".format(self.args.gpu))
        return torch.device("cpu")
'''
_INFORMER_MAIN = '''
import torch
from exp_basic import Exp

args = parser.parse_args()
args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
if args.use_gpu:
    device = torch.device("cuda")
exp = Exp(args)
'''


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_flag_the_port_switches_on_handed_to_an_unconverted_device_choice_is_reported(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's F4c (Informer2020): converting main.py alone switches `args.use_gpu` on, and the
    module that still needs converting builds a CUDA device from it; the folder run converts both."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exp_basic.py").write_text(_EXP_BASIC.lstrip("\n"))
    (tmp_path / "main.py").write_text(_INFORMER_MAIN.lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    alone = [f for report in run([("main.py", job)]) for f in report.findings if f.rule == "XLA112"]
    assert [(f.line, f.col) for f in alone] == [(8, 7)]
    assert "`args.use_gpu`, which the port switches on, goes to `Exp` in exp_basic.py" in alone[0].message
    assert [f for report in lint_folder(tmp_path, target) for f in report.findings if f.rule == "XLA112"] == []


_EXP_TRAINS = '''
import torch

class Exp:
    def __init__(self, args):
        self.device = torch.device(f"cuda:{args.gpu}") if args.use_gpu else torch.device("cpu")
        self.model = torch.nn.Linear(4, 1).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters())

    def train(self, loader):
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
'''
_EXP_DRIVER = '''
import torch
from exp_trains import Exp

args = parser.parse_args()
args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
exp = Exp(args)
exp.train(make_loader())
'''


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_driver_of_an_unconverted_trainer_is_reported(target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's F4c as it reads now: the device, model, optimizer and loop all live in a class of a
    module that still needs converting; a single-file run of the driver says so where it trains."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exp_trains.py").write_text(_EXP_TRAINS.lstrip("\n"))
    (tmp_path / "main.py").write_text(_EXP_DRIVER.lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    alone = [f for report in run([("main.py", job)]) for f in report.findings if f.rule == "XLA112"]
    assert [(f.line, f.col) for f in alone] == [(7, 1)]
    assert "`exp.train` in exp_trains.py trains a model and still needs converting" in alone[0].message
    assert [f for report in lint_folder(tmp_path, target) for f in report.findings if f.rule == "XLA112"] == []


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_value_that_follows_itself_is_not_followed_forever(target: str) -> None:
    """``device = "cuda" if device == "cpu" else device`` asks the value of ``device`` to know
    the value of ``device`` (dgl-ke's model classes): it once ran out of Python's stack, and the
    file was left alone with an internal error."""
    source = textwrap.dedent(
        """\
        import torch


        def pick(gpu):
            device = "cpu"
            device = "cuda" if device == "cpu" else device
            return device


        model = torch.nn.Linear(2, 2).to(pick(0))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        """
    )
    once = convert_source(source, target=target).output
    assert isinstance(once, str) and 'device = "xla" if device == "cpu" else device' in once
    assert convert_source(once, target=target).output == once
