"""A single-file run's XLA003 at a method call on an instance of one of several project classes,
looked up in a dict by a key (held-out list 19, daisyRec's run_examples/test.py): in a branch whose
``if`` tests that key (``name.lower() in ['a']``), the instance is one of the classes those keys give,
so a call there runs only their methods (the finding sits at the call whose branch runs the inherited
training loop, not at one whose classes override it); past the branches, the finding names every
method the call may run, by the receiver's class, not one of them as what runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODELS = """\
import torch


class Base(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.layer = torch.nn.Linear(3, 3)

    def fit(self, loader):
        self.to(self.device)
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        for x in loader:
            loss = self(x.to(self.device)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


class A(Base):
    def fit(self, data):
        self.counts = len(data)

    def rank(self, loader):
        out = []
        for x in loader:
            out.append(self.layer(x.to(self.device)).argmax(-1))
        return out


class B(Base):
    def forward(self, x):
        return self.layer(x)

    def rank(self, loader):
        out = []
        for x in loader:
            out.append(self(x.to(self.device)))
        return out
"""

TEST = """\
import sys

from models import A, B

classes = {'a': A, 'b': B}
name = sys.argv[1]
if name.lower() in ['a']:
    model = classes[name]()
    model.fit(data)
elif name.lower() in ['b']:
    model = classes[name]()
    model.fit(loader)
preds = model.rank(test_loader)
"""


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _runs(found: list[tuple[str, int, str]]) -> dict[int, str]:
    return {line: message for rule, line, message in found if rule == "XLA003" and "` runs" in message}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("equal", [False, True], ids=["in-a-list", "equal-to-a-key"])
def test_a_call_in_a_branch_runs_the_classes_its_test_lets_through(tmp_path: Path, target: str, equal: bool) -> None:
    test = TEST.replace("name.lower() in ['a']", "name == 'a'").replace("name.lower() in ['b']", "name == 'b'")
    write_project(tmp_path, "proj", {"models.py": MODELS, "test.py": test if equal else TEST})
    runs = _runs(unfixed_findings(tmp_path, ["test.py"], target)["test.py"])
    assert sorted(runs) == [12, 13], runs  # not 9: ``A.fit`` holds nothing
    assert runs[12].startswith("`model.fit` runs `Base.fit` in models.py, which this run does not convert"), runs
    assert runs[13].startswith(
        "`model.rank` runs, by the class of `model`, `A.rank` and `B.rank`: `A.rank` in models.py, which this run"
    ), runs


@pytest.mark.parametrize("target", TARGETS)
def test_without_a_test_of_the_key_every_class_may_run(tmp_path: Path, target: str) -> None:
    """(The control: the same calls under tests of something else.)"""
    test = TEST.replace("name.lower() in ['a']", "len(sys.argv) > 2").replace("name.lower() in ['b']", "True")
    write_project(tmp_path, "proj", {"models.py": MODELS, "test.py": test})
    runs = _runs(unfixed_findings(tmp_path, ["test.py"], target)["test.py"])
    assert sorted(runs) == [9, 13], runs  # the first call that may run ``Base.fit`` (through ``B``)
    assert runs[9].startswith("`model.fit` runs, by the class of `model`, `Base.fit`"), runs
