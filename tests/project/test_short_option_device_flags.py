"""A device flag added with a short option first (``add_argument("-d", "--device", default="cuda:0")``)
and handed to a trainer class of another module, built and run in one expression
(``Trainer(device=args.device).fit(data)``), whose ``__init__`` binds ``self.device`` and whose
``fit`` moves the model and each batch to it.  The flag's attribute is its long option, as argparse
names it: a project run ports its CUDA default (XLA101), and a single-file run of the script too,
where XLA003 says the trainer's module still needs converting (and that a project run ports it:
it does).  A default the port leaves off the XLA device ("cpu") is an error at the default
(XLA111) in both runs, for a trainer of this file as for one of another module; a trainer built
in the expression but not trained there is no device choice of the training."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import convert_folder
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAINER = """\
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, device=torch.device("cuda:0")):
        self.device = device

    def fit(self, data):
        model = torch.nn.Linear(4, 1).to(self.device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in data:
            x, y = x.to(self.device), y.to(self.device)
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    def describe(self):
        return str(self.device)
"""
RUN = """\
import argparse

import torch
{imports}

p = argparse.ArgumentParser()
p.add_argument("-d", "--device", type=str, default={default})
args = p.parse_args()
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
{call}
"""
FROM = "from trainer import Trainer"
ALIAS = "import trainer as tr"
PROJECT = ["trainer.py", "run.py"]


def _write(tmp_path: Path, default: str = '"cuda:0"', imports: str = FROM, call: str = "") -> Path:
    run = RUN.format(imports=imports, default=default, call=call or "Trainer(device=args.device).fit(data)")
    return write_project(tmp_path, "flags", {"trainer.py": TRAINER, "run.py": run})


@pytest.mark.parametrize(
    ("imports", "call"),
    [(FROM, "Trainer(device=args.device).fit(data)"), (ALIAS, "tr.Trainer(args.device).fit(data)")],
    ids=["keyword", "alias-positional"],
)
@pytest.mark.parametrize("target", TARGETS)
def test_a_project_run_ports_the_short_option_flags_cuda_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, imports: str, call: str
) -> None:
    monkeypatch.chdir(_write(tmp_path, imports=imports, call=call))
    found = unfixed_findings(tmp_path, PROJECT, target)
    assert [f for f in found["run.py"] if f[0] in ("XLA111", "XLA003", "XLA112")] == []
    assert [f for f in found["trainer.py"] if f[0].startswith("XLA1")] == []
    convert_folder(tmp_path)
    run = (tmp_path / "run.py").read_text()
    assert 'p.add_argument("-d", "--device", type=str, default="xla")' in run


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_ports_the_default_and_says_the_project_run_ports_the_trainer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(_write(tmp_path))
    found = unfixed_findings(tmp_path, ["run.py"], target)["run.py"]
    assert [f for f in found if f[0] == "XLA111"] == []
    ((_, line, message),) = [f for f in found if f[0] == "XLA003"]
    assert line == 4
    assert "which this run does not convert" in message
    assert message.endswith("converting the project (`xla-codemod convert .` at its root) would port it")


@pytest.mark.parametrize("names", [PROJECT, ["run.py"]], ids=["project", "single-file"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_cpu_default_handed_to_a_trainer_run_in_one_expression_is_an_error_at_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(_write(tmp_path, default='"cpu", help="cpu or cuda"'))
    ((_, line, message),) = [f for f in unfixed_findings(tmp_path, names, target)["run.py"] if f[0] == "XLA111"]
    assert line == 7
    assert "`Trainer` (trainer.py) trains, and moves to the device it is handed" in message
    assert 'ends on "cpu" (the CPU)' in message
    assert "the port leaves a CPU choice as the author wrote it" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_cpu_default_handed_to_a_trainer_of_the_same_file_is_an_error_at_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    script = TRAINER + RUN.format(imports="", default='"cpu"', call="Trainer(device=args.device).fit(data)")
    monkeypatch.chdir(write_project(tmp_path, "flags", {"run.py": script}))
    ((_, line, message),) = [f for f in unfixed_findings(tmp_path, ["run.py"], target)["run.py"] if f[0] == "XLA111"]
    assert script.splitlines()[line - 1].startswith('p.add_argument("-d", "--device"')
    assert "`Trainer` (this file) trains, and moves to the device it is handed" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_built_in_the_expression_but_not_trained_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(_write(tmp_path, default='"cpu"', call="print(Trainer(device=args.device).describe())"))
    assert [f for f in unfixed_findings(tmp_path, PROJECT, target)["run.py"] if f[0] == "XLA111"] == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_default_the_port_cannot_tell_is_a_device_is_an_error_that_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``--gpu`` names no device: its "cuda:0" default stays, and the trainer moves to it."""
    write_project(
        tmp_path,
        "flags",
        {
            "trainer.py": TRAINER,
            "run.py": RUN.format(imports=FROM, default='"cuda:0"', call="Trainer(device=args.gpu).fit(data)").replace(
                '"-d", "--device"', '"--gpu"'
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    ((_, line, message),) = [f for f in unfixed_findings(tmp_path, PROJECT, target)["run.py"] if f[0] == "XLA111"]
    assert line == 7
    assert 'ends on "cuda:0" (a CUDA device)' in message
    assert "CPU choice" not in message
    assert "the port rewrites no value it cannot tell is a device" in message


OPTS = """\
import argparse


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("-d", "--device", type=str, default="cuda:0")
    return p.parse_args()
"""
RUN_WITH_OPTS = """\
import torch

from opts import get_args
from trainer import Trainer

args = get_args()
Trainer(device=args.device).fit([(torch.randn(8, 4), torch.randn(8, 1))])
"""


@pytest.mark.parametrize("target", TARGETS)
def test_an_options_module_without_torch_gets_its_short_option_flags_default_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """The quick look that skips a file without torch unparsed reads a device flag after a short
    option as one that chooses the device for other modules."""
    files = {"opts.py": OPTS, "trainer.py": TRAINER, "run.py": RUN_WITH_OPTS}
    monkeypatch.chdir(write_project(tmp_path, "flags", files))
    found = unfixed_findings(tmp_path, ["opts.py", *PROJECT], target)
    assert [f for f in found["run.py"] if f[0] in ("XLA111", "XLA003", "XLA112")] == []
    convert_folder(tmp_path)
    assert 'p.add_argument("-d", "--device", type=str, default="xla")' in (tmp_path / "opts.py").read_text()


LOADED = """\
import argparse
import importlib

import torch

p = argparse.ArgumentParser()
p.add_argument("-m", "--model-module", type=str, default="trainer")
p.add_argument("-d", "--device", type=str, default={default})
args = p.parse_args()
Trainer = importlib.import_module(args.model_module).Trainer
gru = Trainer(device=args.device)
gru.fit([(torch.randn(8, 4), torch.randn(8, 1))])
"""


@pytest.mark.parametrize("names", [PROJECT, ["run.py"]], ids=["project", "single-file"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_class_of_the_module_a_flag_loads_by_default_is_followed_to_the_device_it_is_handed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    """``Trainer = importlib.import_module(args.model_module).Trainer``, the flag's default naming a
    module of the project: the class is that module's, as the run loads it unless told otherwise."""
    files = {"trainer.py": TRAINER, "run.py": LOADED.format(default='"cpu"')}
    monkeypatch.chdir(write_project(tmp_path, "flags", files))
    ((_, line, message),) = [f for f in unfixed_findings(tmp_path, names, target)["run.py"] if f[0] == "XLA111"]
    assert line == 8
    assert "`Trainer` (trainer.py) trains, and moves to the device it is handed" in message


@pytest.mark.parametrize("target", TARGETS)
def test_the_cuda_default_of_a_flag_handed_to_a_class_loaded_by_default_is_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    files = {"trainer.py": TRAINER, "run.py": LOADED.format(default='"cuda:0"')}
    monkeypatch.chdir(write_project(tmp_path, "flags", files))
    found = unfixed_findings(tmp_path, PROJECT, target)["run.py"]
    assert [f for f in found if f[0] in ("XLA111", "XLA003", "XLA112")] == []
