"""Whole-project runs where the device is set in one module and used in others: the port
ports the value where it is set, or says where it stays off the XLA device (no silent port).

Executed (PJRT_DEVICE=CPU): the template project, converted, trains on XLA when its template
sets the device; converted with XLA101 off (the negative control) it asks for CUDA and fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from tests.support.executed import RUN_TIMEOUT, XLA_RUNNER, convert_folder, parse_run, run_environment

# A config object whose default device is set in a module without torch, and a CPU fallback
# in the module that updates it (the fifth held-out list's config_node_device).
CONFIG_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/config/defaults.py": 'from types import SimpleNamespace\n\nconfig = SimpleNamespace()\nconfig.device = "cuda"\n',
    "pkg/config/__init__.py": """\
import copy

import torch

from .defaults import config as _defaults


def get_default_config():
    return copy.deepcopy(_defaults)


def update_config(config):
    if not torch.cuda.is_available():
        config.device = "cpu"
    return config
""",
    "train.py": """\
import torch

from pkg.config import get_default_config, update_config


def main():
    config = update_config(get_default_config())
    device = torch.device(config.device)
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = torch.randn(8, 4).to(device), torch.randn(8, 2).to(device)
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
""",
}


def project(tmp_path: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project written out, as the current folder (findings name files relative to it)."""
    repo = tmp_path / "proj"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    monkeypatch.chdir(repo)
    return repo


def convert_project(repo: Path, target: str) -> dict[str, list[Finding]]:
    """Every file converted in place as one run of the command line: findings by path."""
    from codemods.runner import Job, run

    job = Job("write", target, RuleSelection())
    paths = sorted(str(p) for p in repo.rglob("*.py"))
    return {str(Path(r.path).relative_to(repo)): r.findings for r in run([(path, job) for path in paths])}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_the_cpu_fallback_of_a_config_default_set_elsewhere_stays_and_is_an_error(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path, CONFIG_PROJECT, monkeypatch)
    findings = convert_project(repo, target)
    assert (
        'if not torch.cuda.is_available():\n        config.device = "cpu"'
        in (repo / "pkg/config/__init__.py").read_text()
    )
    assert 'config.device = "xla"' in (repo / "pkg/config/defaults.py").read_text()  # read, though without torch
    errors = [f for f in findings["pkg/config/__init__.py"] if f.severity == "error"]
    assert [(f.rule, f.line) for f in errors] == [("XLA104", 13)]
    assert "guards the CPU fallback of `config.device`" in errors[0].message
    assert 'make sure `config.device` is "xla" where its default is set' in errors[0].message


# A script without torch that sets its own GPU switch to False and hands the config to a trainer
# of the project, whose agents pick the device with it (the fifth held-out list's cpu_flag_config).
AGENTS_PROJECT = {
    "agents/__init__.py": "",
    "agents/base.py": """\
import torch


class BaseAgent:
    def __init__(self, config):
        self.device = "cuda:0" if config.use_GPU else "cpu"

    def step(self, optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    "agents/dqn.py": """\
import torch
import torch.nn as nn

from agents.base import BaseAgent


class DQN(BaseAgent):
    def __init__(self, config):
        super().__init__(config)
        self.net = nn.Linear(4, 2).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def run_episodes(self, n):
        for _ in range(n):
            x, y = torch.randn(16, 4).to(self.device), torch.randn(16, 2).to(self.device)
            self.step(self.optimizer, (self.net(x) - y).pow(2).mean())
""",
    "agents/trainer.py": """\
class Trainer:
    def __init__(self, config, agent_classes):
        self.config, self.agent_classes = config, agent_classes

    def run_games_for_agents(self):
        for agent_class in self.agent_classes:
            agent_class(self.config).run_episodes(10)
""",
    "run.py": """\
from types import SimpleNamespace

from agents.dqn import DQN
from agents.trainer import Trainer

config = SimpleNamespace()
config.use_GPU = False

if __name__ == "__main__":
    Trainer(config, [DQN]).run_games_for_agents()
""",
}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_scripts_gpu_switch_set_to_false_for_the_projects_device_choice_is_an_error(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path, AGENTS_PROJECT, monkeypatch)
    findings = convert_project(repo, target)
    assert (repo / "run.py").read_text() == AGENTS_PROJECT["run.py"]
    errors = [f for f in findings["run.py"] if f.severity == "error"]
    assert [(f.rule, f.line, f.col) for f in errors] == [("XLA111", 7, 18)]
    assert errors[0].message.startswith(
        "`config.use_GPU = False` keeps the run on the CPU: `config` goes to `Trainer()`, and agents/dqn.py, which "
        "this script imports, picks the device with `use_GPU`"
    )
    assert '"xla" if config.use_GPU else "cpu"' in (repo / "agents/base.py").read_text()


@pytest.mark.parametrize(
    ("setting", "why"),
    [
        ("config.use_GPU = True", "the switch chooses the XLA device"),
        ("config.use_GPU = False\nif len(sys.argv) > 1:\n    config.use_GPU = True", "not False on every path"),
        ("config.use_wandb = False", "not a GPU switch"),
    ],
)
def test_a_gpu_switch_that_is_not_false_or_not_one_is_not_reported(
    tmp_path: Path, setting: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = dict(
        AGENTS_PROJECT,
        **{"run.py": "import sys\n" + AGENTS_PROJECT["run.py"].replace("config.use_GPU = False", setting)},
    )
    findings = convert_project(project(tmp_path, files, monkeypatch), "2.9")
    assert not [f for f in findings["run.py"] if f.rule == "XLA111"], why


# The device set by a project function on the parsed arguments, a "cpu" default beside a "cuda"
# choice, and a trainer that only receives the arguments (the fifth held-out list's template_device).
TEMPLATE_PROJECT = {
    "options.py": """\
import argparse

from templates import set_template

parser = argparse.ArgumentParser()
parser.add_argument("--template", type=str, default=None)
parser.add_argument("--device", type=str, default="cpu", choices=["cpu", "cuda"])
args = parser.parse_args()
set_template(args)
""",
    "templates.py": """\
def set_template(args):
    if args.template is None:
        return
    if args.template.startswith("train"):
        args.device = "cuda"
""",
    "trainers/__init__.py": """\
from .base import Trainer

TRAINERS = {"base": Trainer}


def trainer_factory(args, model, loader):
    return TRAINERS["base"](args, model, loader)
""",
    "trainers/base.py": """\
import torch


class Trainer:
    def __init__(self, args, model, loader):
        self.device = args.device
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.loader = loader

    def train(self):
        for batch in self.loader:
            x, y = [t.to(self.device) for t in batch]
            loss = (self.model(x) - y).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        print(f"trained on {next(self.model.parameters()).device.type}")
""",
    "main.py": """\
import torch
import torch.nn as nn

from options import args
from trainers import trainer_factory

if __name__ == "__main__":
    data = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]
    trainer_factory(args, nn.Linear(4, 2), data).train()
""",
}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_device_a_project_function_sets_on_the_arguments_is_ported_and_the_cpu_default_is_an_error(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project(tmp_path, TEMPLATE_PROJECT, monkeypatch)
    findings = convert_project(repo, target)
    assert 'args.device = "xla"' in (repo / "templates.py").read_text()
    assert 'default="cpu", choices=["cpu", "xla"]' in (repo / "options.py").read_text()
    errors = [f for f in findings["options.py"] if f.severity == "error" and not f.fixed]
    assert [(f.rule, f.line) for f in errors] == [("XLA111", 8)]  # (the output has `import torch_xla` above)
    assert errors[0].message.startswith(
        'the device flag `device` defaults to "cpu" while its choices name an accelerator'
    )


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_cuda_default_of_a_device_flag_in_a_module_without_torch_is_ported(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = dict(TEMPLATE_PROJECT)
    files["options.py"] = files["options.py"].replace('default="cpu", choices=["cpu", "cuda"]', "default='cuda'")
    repo = project(tmp_path, files, monkeypatch)
    findings = convert_project(repo, target)
    assert "default='xla')" in (repo / "options.py").read_text()
    assert not [f for f in findings["options.py"] if not f.fixed]


def test_a_module_without_torch_that_chooses_no_device_is_left_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = dict(TEMPLATE_PROJECT, **{"templates.py": TEMPLATE_PROJECT["templates.py"].replace('"cuda"', "args.gpu")})
    files["options.py"] = files["options.py"].replace('choices=["cpu", "cuda"]', 'choices=["cpu", "mps"]')
    repo = project(tmp_path, files, monkeypatch)
    findings = convert_project(repo, "2.9")
    assert (repo / "templates.py").read_text() == files["templates.py"]
    assert (repo / "options.py").read_text() == files["options.py"]
    assert findings["templates.py"] == findings["options.py"] == []


def _template_run(tmp_path: Path, selection: RuleSelection | None = None) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "proj"
    for name, text in TEMPLATE_PROJECT.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    convert_folder(repo, selection)
    command = [sys.executable, str(XLA_RUNNER), "main.py", "--template", "train"]
    env = run_environment(PJRT_DEVICE="CPU")
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)


@pytest.mark.executed
def test_the_converted_template_project_trains_on_xla(tmp_path: Path) -> None:
    result = _template_run(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "trained on xla" in result.stdout
    assert parse_run(result.stdout, tmp_path).stepped_devices == ("xla",)


@pytest.mark.executed
def test_without_the_ported_template_the_converted_project_asks_for_cuda(tmp_path: Path) -> None:
    """The negative control: the same project converted with XLA101 off keeps `args.device =
    "cuda"` in templates.py, and the model's move fails on a host without CUDA."""
    result = _template_run(tmp_path, RuleSelection(ignore=("XLA101",)))
    assert result.returncode != 0
    assert "CUDA" in result.stderr or "NVIDIA" in result.stderr, result.stderr[-3000:]
