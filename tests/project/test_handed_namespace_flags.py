"""A move under a flag that the caller hands in on a namespace (Multimodal-Transformer: main.py sets
``hyp_params.use_cuda = use_cuda`` beside ``if torch.cuda.is_available(): use_cuda = True``, and
src/train.py moves ``if hyp_params.use_cuda: model = model.cuda()``).  A run on src/train.py alone
leaves main.py's check as it is, False on an XLA host, so those moves never run there: XLA119 at
each guard, naming main.py.  A run on the project converts main.py too (its check is dropped,
XLA104): no such finding.  A flag that no file sets beside a CUDA check (a command-line switch)
is no finding (device/unseen_flags.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from codemods.runner import Job, run
from codemods.targets import DEFAULT_TARGET
from tests.support.executed import convert_folder
from tests.support.fixtures import output_bytes
from tests.support.projects import write_project

TRAIN = """import torch
from torch import nn


def initiate(hyp_params, loader):
    model = nn.Linear(4, 1)
    if hyp_params.use_cuda:
        model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train():
        for x, y in loader:
            if hyp_params.use_cuda:
                x, y = x.cuda(), y.cuda()
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    train()
"""
MAIN = """import argparse

import torch
from src import train

parser = argparse.ArgumentParser()
parser.add_argument("--no_cuda", action="store_true")
args = parser.parse_args()
use_cuda = False
if torch.cuda.is_available():
    if not args.no_cuda:
        torch.set_default_tensor_type("torch.cuda.FloatTensor")
        use_cuda = True
hyp_params = args
hyp_params.use_cuda = use_cuda
train.initiate(hyp_params, [(torch.randn(8, 4), torch.randn(8, 1))])
"""
FILES = {"src/__init__.py": "", "src/train.py": TRAIN, "main.py": MAIN}
_SAYS = (
    "`hyp_params.use_cuda` decides whether `model.cuda()` runs, and this file does not set it: the caller hands it "
    "in, and main.py, which this run does not convert, sets `.use_cuda` beside a `torch.cuda.is_available()` check"
)


@pytest.fixture(autouse=True)
def _back_where_it_was(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def _findings(folder: Path, names: list[str], target: str, rule: str = "XLA119") -> dict[str, list[tuple[int, str]]]:
    os.chdir(folder)  # findings name the files from there (the fixture gives each test its folder back)
    job = Job("lint", target, RuleSelection())
    reports = run([(str(folder / n), job) for n in names], workers=1)
    return {
        str(Path(r.path).relative_to(folder)): [(f.line, f.message) for f in r.findings if f.rule == rule]
        for r in reports
    }


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_run_on_the_module_alone_reports_the_callers_flag(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    found = _findings(folder, ["src/train.py"], target)["src/train.py"]
    assert [line for line, _ in found] == [7, 13]
    assert _SAYS in found[0][1]
    assert "on XLA that move never runs" in found[0][1] and "`xla-codemod convert .` at its root" in found[0][1]
    assert "`hyp_params.use_cuda` decides whether `x.cuda()` runs" in found[1][1]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_run_on_the_project_converts_the_caller(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    found = _findings(folder, list(FILES), target)
    assert found["src/train.py"] == [] and found["main.py"] == []
    assert [line for line, _ in _findings(folder, list(FILES), target, "XLA104")["main.py"]] == [10]


def test_a_copy_without_a_root_marker_reads_the_launcher_beside_the_package(tmp_path: Path) -> None:
    """No .git nor pyproject.toml (a copy of the repository): the run on src/train.py finds its root at
    src/, and main.py, which imports ``src``, sits beside it."""
    folder = tmp_path / "copy"
    for name, text in {"src/train.py": TRAIN, "main.py": MAIN}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    found = _findings(folder, ["src/train.py"], "2.9")["src/train.py"]
    assert [line for line, _ in found] == [7, 13] and _SAYS in found[0][1]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_aliased_flag_of_a_keyword_parameter(tmp_path: Path, target: str) -> None:
    source = (
        TRAIN.replace("import torch\n", "import torch as T\n")
        .replace("torch.optim", "T.optim")
        .replace("def initiate(hyp_params, loader)", "def initiate(loader, *, hp)")
        .replace("hyp_params.use_cuda", "hp.on_gpu")
    )
    main = MAIN.replace("hyp_params.use_cuda = use_cuda", "hyp_params.on_gpu = use_cuda").replace(
        "train.initiate(hyp_params, ", "train.initiate(hp=hyp_params, loader="
    )
    folder = write_project(tmp_path / "p", "p", {**FILES, "src/train.py": source, "main.py": main})
    found = _findings(folder, ["src/train.py"], target)["src/train.py"]
    assert [line for line, _ in found] == [7, 13]
    assert "`hp.on_gpu` decides whether `model.cuda()` runs" in found[0][1] and "main.py" in found[0][1]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_switch_that_no_file_sets_beside_a_cuda_check_is_no_finding(tmp_path: Path, target: str) -> None:
    main = """import argparse

import torch
from src import train

parser = argparse.ArgumentParser()
parser.add_argument("--use_cuda", action="store_true")
hyp_params = parser.parse_args()
train.initiate(hyp_params, [(torch.randn(8, 4), torch.randn(8, 1))])
"""
    folder = write_project(tmp_path / "p", "p", {**FILES, "main.py": main})
    assert _findings(folder, ["src/train.py"], target)["src/train.py"] == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_flag_the_file_sets_itself_is_no_finding(tmp_path: Path, target: str) -> None:
    source = TRAIN.replace(
        "    model = nn.Linear(4, 1)\n", "    hyp_params.use_cuda = False\n    model = nn.Linear(4, 1)\n"
    )
    folder = write_project(tmp_path / "p", "p", {**FILES, "src/train.py": source})
    found = _findings(folder, ["src/train.py"], target)["src/train.py"]
    assert not any("decides whether" in message for _, message in found)


def _convert_alone(folder: Path, name: str) -> str:
    project = Project(folder, summarise_with(DEFAULT_TARGET, RuleSelection(), None), in_run=[folder / name])
    path = folder / name
    conversion = convert_source(path.read_bytes(), imports=project.imports_of(path))
    path.write_bytes(output_bytes(conversion))
    return path.read_text()


def test_the_port_of_the_module_alone_is_idempotent(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    once = _convert_alone(folder, "src/train.py")
    assert "if hyp_params.use_cuda:\n        model = model.to(torch_xla.device())" in once
    assert _convert_alone(folder, "src/train.py") == once
    convert_folder(folder)  # the project: main.py's check is dropped
    assert "use_cuda = True" in (folder / "main.py").read_text()
