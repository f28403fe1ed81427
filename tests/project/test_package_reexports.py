"""A package that re-exports a class from a submodule of the same name (ReChorus:
helpers/__init__.py does ``from helpers.Runner import Runner``): ``from helpers import Runner``
and ``from helpers import *`` bind the class, not the submodule, as Python's import does (the
package's own binding hides the submodule).  A single-file run on a script that picks that
runner (by name, even through ``eval(...)``) follows it to its training loop and reports it at
the import (XLA003); where the package binds nothing of that name, the name is the submodule."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

RUNNER = """\
import torch


class Runner:
    def __init__(self, lr):
        self.lr = lr

    def fit(self, model, data, epochs):
        optimizer = torch.optim.Adam(model.parameters(), lr=self.lr)
        for epoch in range(epochs):
            for x in data:
                x = x.to(model.device)
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()
"""

MAIN = """\
import torch
import torch.nn as nn

{imports}

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
model.device = device
runner_cls = {runner}
runner_cls(lr=0.1).fit(model, [torch.randn(8, 4)], epochs=2)
"""


def _findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, init: str, imports: str, runner: str, target: str
) -> list[Finding]:
    repo = tmp_path / "proj"
    (repo / "helpers").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (repo / "helpers" / "__init__.py").write_text(init)
    (repo / "helpers" / "Runner.py").write_text(RUNNER)
    (repo / "main.py").write_text(MAIN.format(imports=imports, runner=runner))
    monkeypatch.chdir(repo)
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "main.py"])
    conversion = convert_source(
        (repo / "main.py").read_bytes(), target=target, imports=project.imports_of(repo / "main.py")
    )
    return [f for f in conversion.findings if f.rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("imports", "runner"),
    [
        ("from helpers import *", 'eval("{0}".format("Runner"))'),
        ("from helpers import *", "Runner"),
        ("from helpers import Runner", "Runner"),
    ],
    ids=["star-eval", "star", "by-name"],
)
def test_a_runner_the_package_re_exports_is_followed_to_its_training_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, imports: str, runner: str
) -> None:
    (finding,) = _findings(tmp_path, monkeypatch, "from helpers.Runner import Runner\n", imports, runner, target)
    assert finding.line == 5, finding  # the import, below the added torch_xla import
    assert "helpers/Runner.py, which this run does not convert, holds a training loop" in finding.message
    assert "`Runner` has `optimizer.step()`" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_without_the_re_export_the_name_is_the_submodule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    (finding,) = _findings(tmp_path, monkeypatch, "", "from helpers import Runner", "Runner.Runner", target)
    assert "helpers/Runner.py" in finding.message and "`Runner` has `optimizer.step()`" in finding.message
    assert _findings(tmp_path / "unused", monkeypatch, "", "from helpers import Runner", "None", target) == []
