"""An optimizer handed to a package the tool does not follow, which no code the tool sees steps
(XLA307, training/library_steppers.py), in a project on disk: a package the project does not hold
is reported at the call that hands it the optimizer (a function, and a trainer class whose method
runs the steps); a package of the project's own is its code (converted, not reported); a unit test,
and an attribute optimizer of a module other files of the run import, are not reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.training.rules.xla307_library_training_loop import LIBRARY_TRAINING_LOOP
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

SCRIPT = """\
import torch
import somelib
from somelib.training import Trainer


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    somelib.fit(model, optimizer, loader)


def other(model, loader):
    opt = torch.optim.Adam(model.parameters())
    trainer = Trainer(model=model, optimizer=opt, train_loader=loader)
    trainer.train()


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2), [])
"""
OWN_LIBRARY = """\
def fit(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        optimizer.step()
"""


def _library_steppers(findings: dict[str, list[tuple[str, int, str]]], name: str) -> list[tuple[int, str]]:
    return [
        (line, message)
        for rule, line, message in findings[name]
        if rule == LIBRARY_TRAINING_LOOP.code and "a package the tool does not follow" in message
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_a_package_outside_the_project_is_reported_at_the_call(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"train.py": SCRIPT})
    found = _library_steppers(unfixed_findings(folder, ["train.py"], target), "train.py")
    assert [line for line, _ in found] == [8, 13]
    assert found[0][1].startswith("`somelib.fit` (somelib, a package the tool does not follow) is handed the optimizer")
    assert "`Trainer` (somelib, a package the tool does not follow) is handed the optimizer `opt`" in found[1][1]
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    assert all(barrier in message for _, message in found)


@pytest.mark.parametrize("target", TARGETS)
def test_a_package_of_the_project_is_its_code(tmp_path: Path, target: str) -> None:
    files = {"train.py": SCRIPT, "somelib/__init__.py": OWN_LIBRARY, "somelib/training.py": "class Trainer: ...\n"}
    folder = write_project(tmp_path / "p", "p", files)
    assert _library_steppers(unfixed_findings(folder, ["train.py"], target), "train.py") == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_unit_test_is_not_reported(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"tests/test_fit.py": SCRIPT})
    assert _library_steppers(unfixed_findings(folder, ["tests/test_fit.py"], target), "test_fit.py") == []


AGENT = """\
import torch
import somelib


class Agent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(2, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters())
        somelib.register(self.net, self.optimizer)
"""
DRIVER = """\
from agent import Agent

agent = Agent()
for x in range(3):
    agent.net(x).sum().backward()
    agent.optimizer.step()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_an_attribute_optimizer_of_an_imported_module_is_not_reported(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"agent.py": AGENT, "run.py": DRIVER})
    findings = unfixed_findings(folder, ["agent.py", "run.py"], target)
    assert _library_steppers(findings, "agent.py") == []
    alone = unfixed_findings(write_project(tmp_path / "q", "q", {"agent.py": AGENT}), ["agent.py"], target)
    assert [line for line, _ in _library_steppers(alone, "agent.py")] == [10]  # the negative control


MISSING_MODULE = """\
import torch
from train.train_x import train_epoch


def main(model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(3):
        train_epoch(model, optimizer, loader, epoch)


if __name__ == "__main__":
    main(torch.nn.Linear(2, 2), [])
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_missing_module_of_a_project_folder_is_not_a_package(tmp_path: Path, target: str) -> None:
    """GraphCL's pre-training/main_SBMs_node_classification.py: ``train/`` is the project's folder
    (other modules in it), the module it imports is missing: the project's, not a library's; no run can
    read its training step, so the call that hands it the optimizer is an error that says so
    (tests/project/test_unresolved_callees.py)."""
    files = {"pre/main.py": MISSING_MODULE, "pre/train/aug.py": "def aug(x):\n    return x\n"}
    folder = write_project(tmp_path / "p", "p", files)
    findings = unfixed_findings(folder, ["pre/main.py"], target)
    assert _library_steppers(findings, "main.py") == []
    missing = [line for rule, line, message in findings["main.py"] if rule == "XLA307" and "`train.train_x`" in message]
    assert missing == [8]


@pytest.mark.parametrize("target", TARGETS)
def test_a_folder_without_python_files_is_no_project_module(tmp_path: Path, target: str) -> None:
    files = {"pre/main.py": MISSING_MODULE, "pre/train/notes.txt": "runs\n"}
    folder = write_project(tmp_path / "p", "p", files)
    found = _library_steppers(unfixed_findings(folder, ["pre/main.py"], target), "main.py")
    assert [line for line, _ in found] == [8]
    assert found[0][1].startswith("`train_epoch` (train, a package the tool does not follow)")


BUILDERS = """\
import torch


def build_optimizer(model, cfg):
    return torch.optim.AdamW(model.parameters(), lr=cfg["lr"])


def build_loader(cfg):
    return torch.utils.data.DataLoader(range(cfg["n"]), batch_size=2)
"""
COMPOSER_SCRIPT = """\
from composer import Trainer

from pkg.builders import build_loader, build_optimizer


def main(cfg, model):
    optimizer = build_optimizer(model, cfg)
    loader = build_loader(cfg)
    trainer = Trainer(model=model, train_dataloader=loader, optimizers=optimizer, max_duration="1ep")
    trainer.fit()
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("converted", [["train.py"], ["train.py", "pkg/builders.py"]])
def test_an_optimizer_a_helper_of_another_module_builds(tmp_path: Path, target: str, converted: list[str]) -> None:
    """llm-foundry's train(): ``optimizer = build_optimizer(model, ...)`` (llmfoundry/utils/builders.py), then
    Composer's ``Trainer(optimizers=optimizer)`` with no device: Composer's get_device(None) is the CPU on an
    XLA host, and its steps end with no barrier."""
    files = {"train.py": COMPOSER_SCRIPT, "pkg/__init__.py": "", "pkg/builders.py": BUILDERS}
    found = _library_steppers(
        unfixed_findings(write_project(tmp_path / "p", "p", files), converted, target), "train.py"
    )
    assert [line for line, _ in found] == [9]
    assert found[0][1].startswith(
        "`Trainer` (composer, a package the tool does not follow) is handed the optimizer `optimizer`"
    )
    assert found[0][1].endswith(
        "Composer's Trainer runs on XLA when handed device='tpu', with the model on "
        f"{'torch_xla.device()' if target == '2.9' else 'xm.xla_device()'} before the "
        "optimizer is built (it raises otherwise)"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_composer_on_its_tpu_device(tmp_path: Path, target: str) -> None:
    on_tpu = COMPOSER_SCRIPT.replace('max_duration="1ep")', 'max_duration="1ep", device="tpu")')
    files = {"train.py": on_tpu, "pkg/__init__.py": "", "pkg/builders.py": BUILDERS}
    folder = write_project(tmp_path / "p", "p", files)
    assert _library_steppers(unfixed_findings(folder, ["train.py"], target), "train.py") == []


COQUI_SCRIPT = """\
from trainer import Trainer, TrainerArgs


def main(config, model, out_path, train):
    trainer = Trainer(TrainerArgs(), config, out_path, model=model, train_samples=train)
    trainer.fit()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_coquis_trainer_and_a_trainer_module_of_the_project(tmp_path: Path, target: str) -> None:
    """coqui TTS's bin/train_tts.py: the ``trainer`` package builds and steps its own optimizer, on CUDA only when
    torch.cuda.is_available(); a project whose own ``trainer.py`` the script imports has it converted instead."""

    def coqui(folder: Path) -> list[int]:
        findings = unfixed_findings(folder, ["train.py"], target)["train.py"]
        return [line for rule, line, message in findings if rule == "XLA307" and "(coqui trainer)" in message]

    assert coqui(write_project(tmp_path / "p", "p", {"train.py": COQUI_SCRIPT})) == [5]
    own = {"train.py": COQUI_SCRIPT, "trainer.py": "class Trainer: ...\n\n\nclass TrainerArgs: ...\n"}
    assert coqui(write_project(tmp_path / "q", "q", own)) == []
