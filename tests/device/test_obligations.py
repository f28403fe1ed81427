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
@pytest.mark.parametrize(
    "rule,kind,files", _DEVICE_RUNS, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(_DEVICE_RUNS)]
)
def test_run_case(
    rule: str, kind: str, files: dict[str, str], target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # findings name files relative to the current folder
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)  # configs/run.yaml
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    reports = lint_folder(tmp_path, target)
    assert not any(r.error for r in reports), reports
    fired = [(r.path, f) for r in reports for f in r.findings if f.rule == rule]
    assert bool(fired) == (kind != "negative"), fired
    for path, finding in fired:
        assert path.endswith("train.py")
        if rule == "XLA120":  # at the device literal of the function that nothing calls
            assert (finding.line, finding.col) == (8, 63) and "which no code of the project calls" in finding.message
            continue
        if rule == "XLA005":  # at the training loop of a script whose model class names no device
            assert (finding.line, finding.col) == (6, 1) and "picks no device" in finding.message
            continue
        if "agent.py" in files:  # at the call instantiating a section (config_cases.instantiated_invalid_runs)
            assert "with the keys of `cfg.agent` as arguments" in finding.message
            continue
        assert (finding.line, finding.col) == (6, 13)  # at the move, naming the helper's file
        assert (
            "`pick_device()` in helpers.py, which returns" in finding.message
            or "`pd()` in helpers.py" in finding.message
        )


def test_a_single_file_run_says_the_device_comes_from_a_module_it_does_not_read() -> None:
    source = dict(next(files for rule, kind, files in _DEVICE_RUNS if (rule, kind) == ("XLA112", "positive")))[
        "train.py"
    ]
    conversion = convert_source(textwrap.dedent(source).lstrip("\n"))
    messages = [f.message for f in conversion.findings if f.rule == "XLA003"]
    assert messages == [
        "the device comes from `pick_device` in another module of the project that this run does not read: "
        "run the tool on the project folder to follow it, and check it returns the XLA device"
    ]


_EVALUATE = """
import torch

def metrics(model, loader):
    hits = 0
    for user, item in loader:
        user, item = user.cuda(), item.cuda()
        hits += model(user, item).sum().item()
    return hits
"""
_MAIN = """
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
"""


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
    assert (
        "goes to `evaluate.metrics` in evaluate.py, which feeds it batches and still needs converting"
        in alone[0].message
    )
    folder = [f for report in lint_folder(tmp_path, target) for f in report.findings if f.rule == "XLA116"]
    assert folder == []


_EXP_BASIC = """
import torch

class Exp:
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()

    def _acquire_device(self):
        if self.args.use_gpu:
            return torch.device("cuda:{}".format(self.args.gpu))
        return torch.device("cpu")
"""
_INFORMER_MAIN = """
import torch
from exp_basic import Exp

args = parser.parse_args()
args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
if args.use_gpu:
    device = torch.device("cuda")
exp = Exp(args)
"""


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


_EXP_TRAINS = """
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
"""
_EXP_DRIVER = """
import torch
from exp_trains import Exp

args = parser.parse_args()
args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
exp = Exp(args)
exp.train(make_loader())
"""


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_driver_of_an_unconverted_trainer_is_reported(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's F4c as it reads now: the device, model, optimizer and loop all live in a class of a
    module that still needs converting; a single-file run of the driver says so where it trains."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exp_trains.py").write_text(_EXP_TRAINS.lstrip("\n"))
    (tmp_path / "main.py").write_text(_EXP_DRIVER.lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    alone = [f for report in run([("main.py", job)]) for f in report.findings if f.rule == "XLA112"]
    assert [(f.line, f.col) for f in alone] == [(6, 7), (7, 1)]
    # ``args.use_gpu`` picks the device in Exp: its check is dropped here, and there it builds a CUDA device.
    assert "`args.use_gpu`, which the port switches on, goes to `Exp` in exp_trains.py" in alone[0].message
    assert "`exp.train` in exp_trains.py trains a model and still needs converting" in alone[1].message
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


_ARGUMENTS = """
import argparse

import torch


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()
    args.{flag} = not args.no_cuda and torch.cuda.is_available()
    return args
"""
_RL_MAIN = """
import torch

from arguments import get_args


def main():
    args = get_args()
    device = torch.device("cuda:0" if args.{flag} else "cpu")
    actor_critic = torch.nn.Linear(3, 1)
    actor_critic.to(device)
    optimizer = torch.optim.Adam(actor_critic.parameters())
    for step in range(10):
        loss = actor_critic(torch.randn(4, 3).to(device)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def _device_findings(reports: list[FileReport]) -> list[tuple[str, str, int, int, str]]:
    return [
        (Path(r.path).name, f.rule, f.line, f.col, f.message)
        for r in reports
        for f in r.findings
        if f.rule in ("XLA104", "XLA111", "XLA112", "XLA003")
    ]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_device_flag_computed_in_another_module_is_followed(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ikostrikov's pytorch-a2c-ppo-acktr shape: `args.cuda` set in arguments.py's get_args(),
    the device chosen with it in main.py.  The project run drops the check where the flag is
    set (as for a local `use_cuda`), and the choice is the XLA device; main.py alone says the
    choice goes through get_args() in arguments.py, and that a project run follows it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arguments.py").write_text(_ARGUMENTS.format(flag="cuda").lstrip("\n"))
    (tmp_path / "main.py").write_text(_RL_MAIN.format(flag="cuda").lstrip("\n"))
    folder = _device_findings(lint_folder(tmp_path, target))
    assert [(name, rule, line) for name, rule, line, _, _ in folder] == [("arguments.py", "XLA104", 10)]
    job = Job("lint", target, RuleSelection())
    alone = _device_findings(run([("main.py", job)]))
    assert [(name, rule, line, col) for name, rule, line, col, _ in alone] == [("main.py", "XLA112", 8, 27)]
    assert "`args.cuda` comes from `get_args()` in arguments.py, which this run does not convert" in alone[0][4]
    assert "a run on the project folder follows it" in alone[0][4]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_flag_of_another_module_that_stays_false_is_an_error_at_the_device_choice(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flag not named for CUDA keeps its check where it is set: False on an XLA host, so the
    choice in main.py takes the CPU; the project run says so there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arguments.py").write_text(_ARGUMENTS.format(flag="accel").lstrip("\n"))
    (tmp_path / "main.py").write_text(_RL_MAIN.format(flag="accel").lstrip("\n"))
    folder = _device_findings(lint_folder(tmp_path, target))
    assert [(name, rule, line, col) for name, rule, line, col, _ in folder] == [("main.py", "XLA111", 8, 27)]
    assert "`args.accel` comes from `get_args()` in arguments.py, where it is `not args.no_cuda and " in folder[0][4]


# Single-file runs where the device, the model or the batches come from a project module the run
# does not convert: (files, the script, the rule and line of the finding, what it names).
_CROSS_MODULE_SHAPES = {
    "device-set-on-args": (
        {
            "src/__init__.py": "",
            "src/gpu.py": """
                import torch


                def parse_gpu(args):
                    if torch.cuda.is_available():
                        args.device = torch.device("cuda")
                    else:
                        args.device = torch.device("cpu")
                """,
            "train.py": """
                import torch

                from src.gpu import parse_gpu


                def main(args, loader):
                    parse_gpu(args)
                    model = torch.nn.Linear(4, 2)
                    model.to(args.device)
                    optimizer = torch.optim.AdamW(model.parameters())
                    for batch in loader:
                        batch = {k: v.to(args.device) for k, v in batch.items()}
                        model(batch["x"]).sum().backward()
                        optimizer.step()
                        optimizer.zero_grad()
                """,
        },
        "train.py",
        ("XLA112", 7),
        "`args.device` is set by `parse_gpu()` in src/gpu.py, which this run does not convert",
    ),
    "model-built-elsewhere": (
        {
            "modeling.py": """
                import torch
                from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


                def set_device():
                    assert torch.cuda.is_available()
                    torch.cuda.set_device(0)


                def load_model(args, vocab):
                    model = torch.nn.Linear(vocab, 2)
                    return FSDP(model, device_id=torch.cuda.current_device())
                """,
            "train.py": """
                import torch

                from modeling import load_model, set_device


                def main(args, loader):
                    set_device()
                    model = load_model(args, 16)
                    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                    for x in loader:
                        model(x).sum().backward()
                        optimizer.step()
                        optimizer.zero_grad()
                """,
        },
        "train.py",
        ("XLA112", 8),
        "comes from `load_model()` in modeling.py, which this run does not convert",
    ),
    "batches-moved-by-a-model-method": (
        {
            "utils/__init__.py": "",
            "utils/gpu.py": """
                import torch


                def to_gpu(x):
                    if torch.cuda.is_available():
                        x = x.cuda(non_blocking=True)
                    return x
                """,
            "model.py": """
                from torch import nn

                from utils import gpu as utils


                class Tacotron2(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2)

                    def parse_batch(self, batch):
                        x, y = batch
                        return utils.to_gpu(x).float(), utils.to_gpu(y).float()

                    def forward(self, x):
                        return self.fc(x)
                """,
            "train.py": """
                import torch

                from model import Tacotron2


                def train(train_loader):
                    model = Tacotron2().cuda()
                    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
                    for i, batch in enumerate(train_loader):
                        x, y = model.parse_batch(batch)
                        loss = (model(x) - y).pow(2).mean()
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                """,
        },
        "train.py",
        ("XLA116", 10),
        "`model.parse_batch()` in model.py, which calls into utils/gpu.py, which this run does not convert",
    ),
    "experiment-class": (
        {
            "exp/__init__.py": "",
            "exp/exp_basic.py": """
                import torch


                class Exp_Basic(object):
                    def __init__(self, args):
                        self.args = args
                        self.device = self._acquire_device()
                        self.model = self._build_model().to(self.device)

                    def _acquire_device(self):
                        if self.args.use_gpu:
                            device = torch.device('cuda:{}'.format(self.args.gpu))
                        else:
                            device = torch.device('cpu')
                        return device
                """,
            "exp/exp_long_term_forecasting.py": """
                import torch
                from torch import optim

                from exp.exp_basic import Exp_Basic


                class Exp_Long_Term_Forecast(Exp_Basic):
                    def _build_model(self):
                        return torch.nn.Linear(4, 2)

                    def train(self, setting):
                        model_optim = optim.Adam(self.model.parameters(), lr=self.args.learning_rate)
                        for epoch in range(self.args.train_epochs):
                            for i, (batch_x, batch_y) in enumerate(self.train_loader):
                                batch_x = batch_x.float().to(self.device)
                                batch_y = batch_y.float().to(self.device)
                                loss = (self.model(batch_x) - batch_y).pow(2).mean()
                                model_optim.zero_grad()
                                loss.backward()
                                model_optim.step()
                """,
            "run.py": """
                import argparse

                import torch

                from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

                parser = argparse.ArgumentParser()
                parser.add_argument('--use_gpu', type=bool, default=True)
                args = parser.parse_args()
                args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False

                Exp = Exp_Long_Term_Forecast
                for ii in range(args.itr):
                    exp = Exp(args)
                    exp.train('setting')
                """,
        },
        "run.py",
        ("XLA003", 15),
        "`exp.train` runs a training loop in exp/exp_long_term_forecasting.py, which still needs converting",
    ),
}
_OBLIGATION_RULES = ("XLA003", "XLA111", "XLA112", "XLA115", "XLA116")


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("shape", sorted(_CROSS_MODULE_SHAPES))
def test_a_single_file_run_names_the_module_the_chain_goes_through_and_a_project_run_follows_it(
    shape: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The device, the stepped model or the batches come from a module that a run on the
    script alone does not convert: an error names it (and the run on the project folder
    follows it); on the whole project the same obligation is proven and nothing is said."""
    files, script, (rule, line), names = _CROSS_MODULE_SHAPES[shape]
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    alone = [f for report in run([(script, job)]) for f in report.findings if f.rule in _OBLIGATION_RULES]
    assert {f.line for f in alone} == {line}, alone
    assert any(f.rule == rule and names in f.message for f in alone), alone
    folder = [
        (r.path, f.rule, f.line)
        for r in lint_folder(tmp_path, target)
        for f in r.findings
        if f.rule in _OBLIGATION_RULES
    ]
    assert folder == []


_FLAG_THROUGH_A_SUBCLASS = {
    # A namespace package (no __init__.py) and no .git: each file's folder is no project of its own
    # in a run of the whole folder, whose files share the top folder.
    "trainers/base.py": """
        import torch


        class Base:
            def __init__(self, opts):
                self.opts = opts
                self.device = self._pick_device()

            def _pick_device(self):
                if self.opts.use_gpu:
                    device = torch.device("cuda:0")
                else:
                    device = torch.device("cpu")
                return device
        """,
    "trainers/regression.py": """
        import torch

        from trainers.base import Base


        class Regression(Base):
            def fit(self, x):
                model = torch.nn.Linear(4, 1).to(self.device)
                return model(x.to(self.device))
        """,
    "main.py": """
        import argparse

        import torch

        from trainers.regression import Regression

        parser = argparse.ArgumentParser()
        parser.add_argument("--use_gpu", type=bool, default=True)
        opts = parser.parse_args()
        opts.use_gpu = True if torch.cuda.is_available() and opts.use_gpu else False
        Regression(opts).fit(torch.ones(2, 4))
        """,
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_flag_handed_to_a_subclass_whose_base_picks_the_device_is_switched_on_in_both_runs(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's LTSF-Linear: the whole-folder run kept the check (XLA105 only) that the run on
    the script alone drops (XLA104), and the port trained on the CPU: the subclass's module, a
    project of its own folder, did not find the base class's module and so its device flag."""
    monkeypatch.chdir(tmp_path)
    for name, text in _FLAG_THROUGH_A_SUBCLASS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    job = Job("lint", target, RuleSelection())
    for reports in (run([("main.py", job)]), lint_folder(tmp_path, target)):
        at_flag = [(f.rule, f.col) for r in reports if r.path.endswith("main.py") for f in r.findings if f.line == 10]
        assert at_flag == [("XLA104", 16)], at_flag
        assert "`opts.use_gpu` picks the device in trainers/regression.py" in next(
            f.message for r in reports if r.path.endswith("main.py") for f in r.findings if f.rule == "XLA104"
        )


_STEP_FACTORY = """
import torch


def get_step_fn(loss_fn, train, optimize_fn=None):
    def step_fn(state, batch):
        model = state["model"]
        if train:
            optimizer = state["optimizer"]
            optimizer.zero_grad()
            loss = loss_fn(model, batch)
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                loss = loss_fn(model, batch)
        return loss

    return step_fn
"""
_RUN_LIB = """
import torch
import losses


def train(state, data, loss_fn):
    step_fn = losses.get_step_fn(loss_fn, train=True)
    for batch in data:
        step_fn(state, batch.to(torch.device("cuda")))


def evaluate(state, data, loss_fn):
    eval_step = losses.get_step_fn(loss_fn, False)
    for batch in data:
        eval_step(state, batch.to(torch.device("cuda")))
"""
_RUN_LIB_DRIVER = """
import run_lib

run_lib.train(state, data, loss_fn)
run_lib.evaluate(state, data, loss_fn)
"""


def test_a_step_factory_switched_off_does_not_train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """score_sde's ``get_step_fn(sde, train=False)``: the function it returns steps only under
    ``if train:``, so ``run_lib.evaluate`` does not train (no XLA112 "trains a model"); ``train`` does."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "losses.py").write_text(_STEP_FACTORY.lstrip("\n"))
    (tmp_path / "run_lib.py").write_text(_RUN_LIB.lstrip("\n"))
    (tmp_path / "main.py").write_text(_RUN_LIB_DRIVER.lstrip("\n"))
    job = Job("lint", "2.9", RuleSelection())
    trains = [f for report in run([("main.py", job)]) for f in report.findings if "trains a model" in f.message]
    assert [(f.line, f.message.split("`")[1]) for f in trains] == [(3, "run_lib.train")]
