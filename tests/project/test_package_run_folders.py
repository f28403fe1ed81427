"""A script inside a package that imports its package's siblings by their top-level names
(``src/pkg/training/main.py``'s ``from training.loop import train_one_epoch``, run as ``cd src/pkg
&& python -m training.main``): the folder above its package is where those imports resolve,
though that folder is itself a package (``src/pkg/__init__.py``).  A single-file run names the
unconverted modules (XLA003) instead of taking them for installed packages; a whole run
converts them once, with no finding about them left in the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

DEV = """\
import torch


def pick_device(args):
    args.device = "cuda:0" if torch.cuda.is_available() else "cpu"
    return torch.device(args.device)
"""

LOOP = """\
def train_one_epoch(model, loader, opt, args):
    for x in loader:
        loss = model(x.to(args.device)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

MODELS = """\
import torch


def build_model():
    return torch.nn.Linear(4, 1)
"""

MAIN = """\
import torch

from models import build_model
{dev_import}
from training.loop import train_one_epoch


def main(args, loader):
    device = {dev_call}(args)
    model = build_model().to(device)
    opt = torch.optim.AdamW(model.parameters())
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, opt, args)
"""

PLAIN = {"dev_import": "from training.dev import pick_device", "dev_call": "pick_device"}
ALIAS = {"dev_import": "import training.dev as dev", "dev_call": "dev.pick_device"}


def _repo(tmp_path: Path, main: dict[str, str], package: str = "src/pkg") -> Path:
    repo = tmp_path / "repo"
    files = {
        "pyproject.toml": "[project]\nname = 'pkg'\n",
        f"{package}/__init__.py": "",
        f"{package}/models.py": MODELS,
        f"{package}/training/__init__.py": "",
        f"{package}/training/dev.py": DEV,
        f"{package}/training/loop.py": LOOP,
        f"{package}/training/main.py": MAIN.format(**main),
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def _alone(repo: Path, script: Path, target: str, source: bytes | None = None) -> list[Finding]:
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[script])
    data = script.read_bytes() if source is None else source
    return convert_source(data, target=target, imports=project.imports_of(script)).findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("main", [PLAIN, ALIAS], ids=["from-import", "alias"])
@pytest.mark.parametrize("package", ["src/pkg", "pkg"])
def test_a_single_file_run_names_the_modules_beside_the_scripts_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, main: dict[str, str], package: str
) -> None:
    repo = _repo(tmp_path, main, package)
    monkeypatch.chdir(repo)
    script = repo / package / "training" / "main.py"
    findings = _alone(repo, script, target)
    cross = sorted((f.line, f.message) for f in findings if f.rule == "XLA003")
    assert cross == [
        (
            9,
            f"the device comes from `{main['dev_call']}` in {package}/training/dev.py, which still needs converting:"
            " convert it too, and check it returns the XLA device",
        ),
        (
            13,
            f"the optimizer goes to `train_one_epoch` in {package}/training/loop.py, which still needs converting:"
            " convert it too (its training loop needs the step barrier and xm.optimizer_step)",
        ),
    ], findings
    # Not taken for an installed library's device or loop.
    assert not [f for f in findings if f.rule in {"XLA121", "XLA307"}], findings
    project = Project(repo, summarise_with(target, RuleSelection(), None))
    located = project.imports_of(script).module_file("models", "build_model")
    assert located == (repo / package / "models.py", "build_model")


@pytest.mark.parametrize("target", TARGETS)
def test_the_script_is_unchanged_by_a_second_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    repo = _repo(tmp_path, PLAIN)
    monkeypatch.chdir(repo)
    script = repo / "src" / "pkg" / "training" / "main.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[script])
    first = convert_source(script.read_bytes(), target=target, imports=project.imports_of(script))
    assert isinstance(first.output, bytes)
    again = convert_source(first.output, target=target, imports=project.imports_of(script))
    assert again.output == first.output
    assert [(f.line, f.rule) for f in again.findings if f.rule == "XLA003"] == [(9, "XLA003"), (13, "XLA003")]


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_converts_the_modules_and_reports_nothing_cross_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    from codemods.runner import Job, run

    repo = _repo(tmp_path, PLAIN)
    monkeypatch.chdir(repo)
    job = Job("check", target, RuleSelection())
    names = ["main.py", "dev.py", "loop.py"]
    results = run([(str(repo / "src" / "pkg" / "training" / name), job) for name in names])
    findings = {Path(r.path).name: r.findings for r in results}
    assert not [f for f in findings["main.py"] if f.rule in {"XLA003", "XLA121", "XLA307"}], findings["main.py"]
    assert [f.line for f in findings["loop.py"] if f.rule == "XLA301" and f.fixed] == [2]
    assert [f.rule for f in findings["dev.py"] if f.rule == "XLA104"] == ["XLA104"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_found_only_outside_the_scripts_packages_stays_unresolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _repo(tmp_path, PLAIN)
    script = repo / "src" / "pkg" / "training" / "main.py"
    # A folder that is no package above the script: it runs from its own folder (searched
    # already), not from the one above it.
    (repo / "src" / "pkg" / "training" / "__init__.py").unlink()
    (repo / "src" / "pkg" / "training" / "helpers").mkdir()
    script.write_text("from helpers.tools import build\n" + script.read_text())
    # A module beside another package of the root, no ancestor of the script.
    (repo / "other" / "helpers").mkdir(parents=True)
    (repo / "other" / "__init__.py").write_text("")
    (repo / "other" / "helpers" / "tools.py").write_text("def build():\n    return 1\n")
    monkeypatch.chdir(repo)
    project = Project(repo, summarise_with(target, RuleSelection(), None))
    assert project.imports_of(script).module_file("helpers.tools", "build") is None
