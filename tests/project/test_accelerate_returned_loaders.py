"""An Accelerate trainer whose training loop iterates the loader a method of its class returns,
built by a function of another module of the project (``return DataLoader(...)``; that module's
summary lists it in ``loader_returns``) and never prepared: nothing of Accelerate's ends its XLA
steps, so the loop gets the barrier (XLA301) and XLA807 says the loader is unprepared, in a run on
the project and on the trainer's module alone.  Where the trainer prepares what the function
returns, the loop is Accelerate's (XLA807 "nothing to port", no barrier); where the method is
defined nowhere the tool can see (an abstract method a subclass elsewhere overrides), XLA807 does
not say "nothing to port" but what to check."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

DATA = """\
from torch.utils.data import DataLoader


def make_loader(data, batch_size):
    loader = DataLoader(data, batch_size=batch_size, drop_last=True)
    return loader
"""
TRAIN = """\
import torch
from accelerate import Accelerator

from data import make_loader


class Trainer:
    def __init__(self, model, data):
        self.accelerator = Accelerator()
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.model, self.opt = self.accelerator.prepare(model, self.opt)
        self.data = data

    def create_train_dataloader(self):
        return make_loader(self.data, 4)

    def learn(self):
        for x in self.create_train_dataloader():
            loss = self.model(x.to(self.accelerator.device)).mean()
            self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
"""
PREPARED = TRAIN.replace(
    "return make_loader(self.data, 4)", "return self.accelerator.prepare(make_loader(self.data, 4))"
)
ABSTRACT = TRAIN.replace("return make_loader(self.data, 4)", "raise NotImplementedError")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["train.py", "data.py"], ["train.py"]])
def test_a_loop_over_a_loader_another_module_returns_gets_the_barrier(
    tmp_path: Path, target: str, names: list[str]
) -> None:
    findings = _findings(tmp_path, TRAIN, names, target)
    assert ("XLA301", 18) in {(rule, line) for rule, line, _ in findings}, findings
    assert any(rule == "XLA807" and "did not prepare" in message for rule, _, message in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_loader_the_trainer_prepares_is_left_to_accelerate(tmp_path: Path, target: str) -> None:
    findings = _findings(tmp_path, PREPARED, ["train.py", "data.py"], target)
    assert "XLA301" not in {rule for rule, _, _ in findings}, findings
    assert any(rule == "XLA807" and "nothing to port" in message for rule, _, message in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_a_loader_of_a_method_it_cannot_follow_is_not_called_nothing_to_port(tmp_path: Path, target: str) -> None:
    findings = _findings(tmp_path, ABSTRACT, ["train.py", "data.py"], target)
    messages = [message for rule, _, message in findings if rule == "XLA807"]
    assert messages and not any("nothing to port" in m for m in messages), findings
    assert any("cannot follow" in m for m in messages), findings


def _findings(tmp_path: Path, train: str, names: list[str], target: str) -> list[tuple[str, int, str]]:
    """Every finding (fixed or not) of a check run on ``names``: rule, line, message."""
    folder = write_project(tmp_path / "p", "p", {"train.py": train, "data.py": DATA})
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return [(f.rule, f.line, f.message) for report in reports for f in report.findings]


# trlx's shape: the base trainer's loop iterates what ``self.create_train_dataloader()`` returns
# (abstract there); a subclass in another module overrides it.  The base module cannot see the
# override (its loop keeps XLA807 "cannot follow"); the subclass's module reports XLA301 at an
# override's return that hands the loop an unprepared loader (its summary's ``self_loaders``).
BASE = ABSTRACT.replace(
    "        for x in self.create_train_dataloader():\n",
    "        loader = self.create_train_dataloader()\n        for x in loader:\n",
).replace("from data import make_loader\n", "")
STORE = """\
from torch.utils.data import DataLoader


class Store:
    def __init__(self, data):
        self.data = data

    def create_loader(self, batch_size):
        return DataLoader(self.data, batch_size, shuffle=True)
"""
PPO = """\
from base import Trainer
from data import make_loader


class PPOTrainer(Trainer):
    def create_train_dataloader(self):
        return make_loader(self.data, 4)
"""
PPO_PREPARED = PPO.replace(
    "return make_loader(self.data, 4)", "return self.accelerator.prepare(make_loader(self.data, 4))"
)
PPO_ALIAS = PPO.replace("from base import Trainer\n", "import base as trainers\n").replace(
    "(Trainer)", "(trainers.Trainer)"
)
PPO_STORE = """\
from base import Trainer
from store import Store


class PPOTrainer(Trainer):
    def __init__(self, model, data):
        super().__init__(model, data)
        self.store = Store(data)

    def create_train_dataloader(self):
        return self.store.create_loader(4)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["ppo.py", "base.py", "data.py", "store.py"], ["ppo.py"]])
@pytest.mark.parametrize("ppo", [PPO, PPO_ALIAS, PPO_STORE], ids=["function", "alias", "held-store"])
def test_an_override_handing_the_base_loop_an_unprepared_loader_is_an_error(
    tmp_path: Path, target: str, names: list[str], ppo: str
) -> None:
    findings = _override_findings(tmp_path, ppo, names, target)
    line = len(ppo.splitlines())  # the override's return, its last line
    ours = [(path, rule, at, message) for path, rule, at, message in findings if path == "ppo.py"]
    assert ours == [("ppo.py", "XLA301", line, ours[0][3])], findings
    assert "`create_train_dataloader` overrides the method whose loader the Accelerate training loop of" in ours[0][3]
    if "base.py" in names:
        base = [message for path, rule, _, message in findings if path == "base.py" and rule == "XLA807"]
        assert base and all("cannot follow" in m for m in base), findings
        assert not any(path == "base.py" and rule == "XLA301" for path, rule, _, _ in findings), findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["ppo.py", "base.py", "data.py", "store.py"], ["ppo.py"]])
def test_an_override_returning_a_prepared_loader_is_left_alone(tmp_path: Path, target: str, names: list[str]) -> None:
    findings = _override_findings(tmp_path, PPO_PREPARED, names, target)
    assert not any(path == "ppo.py" and rule == "XLA301" for path, rule, _, _ in findings), findings


@pytest.mark.parametrize("target", TARGETS)
def test_the_override_finding_changes_no_code_and_holds_on_a_second_run(tmp_path: Path, target: str) -> None:
    files = {"base.py": BASE, "data.py": DATA, "store.py": STORE, "ppo.py": PPO}
    folder = write_project(tmp_path / "p", "p", files)
    job = Job("write", target, RuleSelection())
    for _ in range(2):
        reports = run([(str(folder / name), job) for name in files], workers=1)
        assert {name: (folder / name).read_text() for name in ("ppo.py", "store.py")} == {
            "ppo.py": PPO,
            "store.py": STORE,
        }
        assert any(f.rule == "XLA301" for r in reports if r.path.endswith("ppo.py") for f in r.findings)


def _override_findings(tmp_path: Path, ppo: str, names: list[str], target: str) -> list[tuple[str, str, int, str]]:
    files = {"base.py": BASE, "data.py": DATA, "store.py": STORE, "ppo.py": ppo}
    folder = write_project(tmp_path / "p", "p", files)
    reports = run([(str(folder / name), Job("check", target, RuleSelection())) for name in names], workers=1)
    return [(Path(r.path).name, f.rule, f.line, f.message) for r in reports for f in r.findings]
