"""A model handed with the device to a trainer class of another module of the project
(torch-rechub's shape): the script adds ``--device`` defaulting to "cpu", hands ``args.device``
to ``main``, which builds ``Trainer(model, device=device)``; the trainer does
``self.device = torch.device(device)``, ``self.model.to(self.device)`` and builds the optimizer
over ``self.model``.  On an XLA host the port trains on the CPU: XLA111 at the default, in a
project run and in a single-file run of the script.  A "cuda" default is ported and says
nothing; a CPU device handed to a helper that builds no optimizer is no device choice of the
training."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, lr=0.1, device="cpu"):
        self.model = model
        self.device = torch.device(device)
        self.model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)

    def fit(self, loader):
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = ((self.model(x) - y) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def evaluate(model, data, device="cpu"):
    model.to(device)
    return [model(x.to(device)) for x in data]
"""
RUN = """\
import argparse

import torch
{imports}


def main(lr, device):
    model = torch.nn.Linear(4, 2)
    trainer = {call}
    trainer.fit([(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--device", default={default})
    args = parser.parse_args()
    main(args.lr, args.device)
"""
FROM = "from trainers.trainer import Trainer"
ALIAS = "import trainers.trainer as tr"


def _findings(tmp_path: Path, names: list[str], target: str, **run: str) -> list[tuple[str, int, str]]:
    fields = {"imports": FROM, "call": "Trainer(model, lr=lr, device=device)", "default": '"cpu"', **run}
    files = {"trainers/__init__.py": "", "trainers/trainer.py": TRAINER, "run.py": RUN.format(**fields)}
    write_project(tmp_path, "handed", files)
    found = unfixed_findings(tmp_path, names, target)
    assert [f for f in found.get("trainer.py", []) if f[0] == "XLA111"] == []
    return [f for f in found["run.py"] if f[0] == "XLA111"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["trainers/trainer.py", "run.py"], ["run.py"]], ids=["project", "single-file"])
@pytest.mark.parametrize(
    ("imports", "call"),
    [
        (FROM, "Trainer(model, lr=lr, device=device)"),
        (FROM, "Trainer(model, lr, device)"),
        (ALIAS, "tr.Trainer(model, device=device, lr=lr)"),
    ],
    ids=["keyword", "positional", "alias"],
)
def test_a_cpu_default_handed_to_the_trainer_is_an_error_at_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str], imports: str, call: str
) -> None:
    monkeypatch.chdir(tmp_path)
    ((_, line, message),) = _findings(tmp_path, names, target, imports=imports, call=call)
    assert line == 16
    assert "`Trainer` (trainers/trainer.py) moves (`self.model.to(self.device)`)" in message.replace(
        "tr.Trainer", "Trainer"
    )
    assert 'ends on "cpu" (the CPU)' in message
    assert "`--device xla`" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_whose_optimizer_the_tool_cannot_follow_is_reported_at_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``self.optimizer = optimizer_fn(self.model.parameters())``, ``optimizer_fn`` a parameter
    (torch-rechub's CTRTrainer): the class trains and moves to the device it is handed."""
    monkeypatch.chdir(tmp_path)
    trainer = TRAINER.replace("lr=0.1, device", "lr=0.1, optimizer_fn=torch.optim.SGD, device").replace(
        "torch.optim.SGD(self.model.parameters(), lr=lr)", "optimizer_fn(self.model.parameters(), lr=lr)"
    )
    files = {"trainers/__init__.py": "", "trainers/trainer.py": trainer}
    write_project(
        tmp_path,
        "handed",
        {**files, "run.py": RUN.format(imports=FROM, call="Trainer(model, lr=lr, device=device)", default='"cpu"')},
    )
    found = [
        f for f in unfixed_findings(tmp_path, ["trainers/trainer.py", "run.py"], target)["run.py"] if f[0] == "XLA111"
    ]
    ((_, line, message),) = found
    assert line == 16
    assert "`Trainer` (trainers/trainer.py) trains, and moves to the device it is handed" in message
    assert 'ends on "cpu" (the CPU)' in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_trainer_built_but_not_trained_here_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``Trainer(model, device="cpu")`` built to export or evaluate, never trained in the file."""
    monkeypatch.chdir(tmp_path)
    run = RUN.replace(
        "    trainer.fit([(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)])\n", "    print(trainer.model)\n"
    )
    files = {"trainers/__init__.py": "", "trainers/trainer.py": TRAINER}
    fields = {"imports": FROM, "call": "Trainer(model, lr=lr, device=device)", "default": '"cpu"'}
    write_project(tmp_path, "handed", {**files, "run.py": run.format(**fields)})
    found = unfixed_findings(tmp_path, ["trainers/trainer.py", "run.py"], target)
    assert [f for f in found["run.py"] if f[0] == "XLA111"] == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_default_is_ported_and_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _findings(tmp_path, ["trainers/trainer.py", "run.py"], target, default='"cuda:0"') == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_cpu_device_handed_to_a_helper_that_builds_no_optimizer_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    run = {
        "imports": "from trainers.trainer import Trainer, evaluate",
        "call": 'Trainer(model, lr=lr, device="xla")\n    evaluate(model, [torch.randn(2, 4)], device=device)',
    }
    assert _findings(tmp_path, ["trainers/trainer.py", "run.py"], target, **run) == []
