"""A single-file run of a script that drives a model's step by the method's name, where the model's class
inherits its CUDA device choice from a base class (``self.device = torch.device("cuda")`` in
``BaseModel.__init__``, of another module), and the model comes from a factory (XLA003 at the call,
naming the base; a factory that imports its modules by a name known only at run time is named with the
folder they come from).  A base whose device is handed in gets nothing (a plain step, right on one
process).  And the folder the tool runs from, above a root no marker made, is searched for imports
(``python -m src.main`` from there: ``from src.utils import *``, XLA112)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

TARGETS = ["2.9", "sagemaker"]

BASE_MODEL = """\
import torch


class BaseModel:
    def __init__(self, opt):
        self.device = torch.device("cuda" if opt["num_gpu"] != 0 else "cpu")
"""

# The device is handed in: nothing of CUDA in the base.
HANDED_BASE_MODEL = """\
class BaseModel:
    def __init__(self, opt):
        self.device = opt["device"]
"""

SR_MODEL = """\
import torch
{base_import}


class SRModel({base}):
    def __init__(self, opt):
        super().__init__(opt)
        self.net = torch.nn.Linear(4, 4).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters())

    def feed_data(self, data):
        self.x = data.to(self.device)

    def optimize_parameters(self):
        self.opt.zero_grad()
        self.net(self.x).sum().backward()
        self.opt.step()
"""

# Its modules by a name written there.
NAMED_FACTORY = """\
import importlib

_mods = [importlib.import_module("pkg.models.sr_model")]


def create_model(opt):
    return getattr(_mods[0], opt["model_type"])(opt)
"""

# Its modules by a scan of its folder (BasicSR's ``create_model``).
SCANNED_FACTORY = """\
import importlib
import os

_folder = os.path.dirname(os.path.abspath(__file__))
_mods = [
    importlib.import_module(f"pkg.models.{name[:-3]}") for name in os.listdir(_folder) if name.endswith("_model.py")
]


def create_model(opt):
    for module in _mods:
        cls = getattr(module, opt["model_type"], None)
        if cls is not None:
            return cls(opt)
    raise ValueError(opt["model_type"])
"""

TRAIN = """\
import torch

from pkg.models import create_model


def main():
    model = create_model({"model_type": "SRModel", "num_gpu": 1})
    for data in [torch.randn(2, 4) for _ in range(3)]:
        model.feed_data(data)
        model.optimize_parameters()


if __name__ == "__main__":
    main()
"""

IMPORTS = {
    "name": ("from pkg.models.base_model import BaseModel", "BaseModel"),
    "alias": ("from pkg.models.base_model import BaseModel as Base", "Base"),
    "module": ("from pkg.models import base_model", "base_model.BaseModel"),
}


def _project(folder: Path, factory: str, base_model: str = BASE_MODEL, base: str = "name") -> Path:
    base_import, base_name = IMPORTS[base]
    files = {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": factory,
        "pkg/models/base_model.py": base_model,
        "pkg/models/sr_model.py": SR_MODEL.format(base_import=base_import, base=base_name),
        "pkg/train.py": TRAIN,
    }
    (folder / ".git").mkdir()
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _findings(
    folder: Path, names: list[str], target: str, mode: Literal["write", "check"] = "check"
) -> dict[str, list[Finding]]:
    job = Job(mode, target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).resolve().relative_to(folder.resolve()).as_posix(): r.findings for r in reports}


def _rules(findings: list[Finding], rules: tuple[str, ...] = ("XLA003", "XLA301")) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings if f.rule in rules)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("base", list(IMPORTS))
def test_a_device_a_base_of_another_module_chooses_is_named_at_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, base: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _project(tmp_path, NAMED_FACTORY, base=base)
    found = _findings(folder, ["pkg/train.py"], target)["pkg/train.py"]
    assert _rules(found) == [("XLA003", 10), ("XLA301", 8)]
    (named,) = [f for f in found if f.rule == "XLA003"]
    assert named.severity == "error"
    assert (
        "the tool cannot tell the class of `model`, and `SRModel.optimize_parameters` of the project, named like "
        "`model.optimize_parameters`, takes a training step in pkg/models/sr_model.py and pkg/models/base_model.py, "
        "which this run does not convert: on an XLA host it runs there on CUDA terms (the device choice and the "
        "optimizer step are not ported; its base `BaseModel` in pkg/models/base_model.py has "
        '`"cuda"` (line 6), a CUDA device choice that its methods run with)' in named.message
    ), named.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_factory_that_imports_its_modules_by_a_name_known_at_run_time_is_named_with_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _project(tmp_path, SCANNED_FACTORY)
    found = _findings(folder, ["pkg/train.py"], target)["pkg/train.py"]
    assert _rules(found) == [("XLA003", 10), ("XLA301", 8)]
    (named,) = [f for f in found if f.rule == "XLA003"]
    assert named.message.startswith(
        "`model` comes from `create_model`, which picks its class among modules it imports by a name known only at "
        'run time (`importlib.import_module(f"pkg.models.{name[:-3]}")` (line 6) in pkg/models/__init__.py): no run '
        "on one file can tell which modules of pkg/models/ it loads, nor the class of `model`, and "
        "`SRModel.optimize_parameters` of the project"
    ), named.message
    assert "its base `BaseModel` in pkg/models/base_model.py" in named.message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("factory", [NAMED_FACTORY, SCANNED_FACTORY], ids=["named", "scanned"])
def test_a_base_whose_device_is_handed_in_takes_a_plain_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, factory: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _project(tmp_path, factory, base_model=HANDED_BASE_MODEL)
    found = _findings(folder, ["pkg/train.py"], target)["pkg/train.py"]
    assert _rules(found) == [("XLA301", 8)]  # the loop's barrier closes the plain step, on one process


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_ports_the_base_and_names_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _project(tmp_path, SCANNED_FACTORY)
    names = ["pkg/__init__.py", "pkg/models/__init__.py", "pkg/models/base_model.py", "pkg/models/sr_model.py"]
    found = _findings(folder, [*names, "pkg/train.py"], target)
    assert all(f.rule != "XLA003" for findings in found.values() for f in findings), found
    assert ("XLA101", 6) in _rules(found["pkg/models/base_model.py"], ("XLA101",))


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_single_file_run_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _project(tmp_path, SCANNED_FACTORY)
    _findings(folder, ["pkg/train.py"], target, mode="write")
    converted = (folder / "pkg/train.py").read_text()
    found = _findings(folder, ["pkg/train.py"], target, mode="write")["pkg/train.py"]
    assert (folder / "pkg/train.py").read_text() == converted
    assert _rules(found) == [("XLA003", 11)]  # (one line down: the added import)
    assert not any(f.fixed for f in found)


HELPERS = """\
import torch


def train(model, data, labels):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = (model(data) - labels).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
"""

MAIN = """\
import torch
{imported}

device = torch.device("cuda")
model = torch.nn.Linear(4, 1).to(device)
train(model, torch.randn(8, 4).to(device), torch.randn(8, 1).to(device))
"""


def _src_repo(repo: Path, imported: str, marked: bool) -> Path:
    (repo / "src").mkdir(parents=True)
    if marked:
        (repo / ".git").mkdir()
    (repo / "src/helpers.py").write_text(HELPERS)
    (repo / "src/main.py").write_text(MAIN.format(imported=imported))
    return repo


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("marked", [False, True], ids=["unmarked", "git"])
@pytest.mark.parametrize("imported", ["from src.helpers import *", "from src.helpers import train"])
@pytest.mark.parametrize("runs_from", ["repo", "elsewhere"])
def test_the_folder_above_an_unmarked_src_that_holds_its_imports_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, marked: bool, imported: str, runs_from: str
) -> None:
    """``python -m src.main`` from the repository's root; the answer does not depend on the folder
    the tool itself runs from."""
    repo = _src_repo(tmp_path / "repo", imported, marked)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / runs_from)
    (finding,) = [f for f in _findings(repo, ["src/main.py"], target)["src/main.py"] if f.rule == "XLA112"]
    assert (finding.line, finding.severity) == (6, "error")
    shown = "src/helpers.py" if runs_from == "repo" else "../repo/src/helpers.py"  # (paths shown from the run's folder)
    assert finding.message.startswith(f"`train` in {shown} trains a model and still needs converting")


@pytest.mark.parametrize("target", TARGETS)
def test_the_folder_above_a_marked_root_is_another_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app/pyproject.toml").write_text("[project]\nname = 'app'\n")
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "app/main.py").write_text(MAIN.format(imported="from helpers import train"))
    monkeypatch.chdir(tmp_path)
    found = _findings(tmp_path, ["app/main.py"], target)["app/main.py"]
    assert not any(f.rule == "XLA112" for f in found), found


@pytest.mark.parametrize("target", TARGETS)
def test_a_whole_run_from_the_folder_above_an_unmarked_src_converts_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _src_repo(tmp_path / "repo", "from src.helpers import *", False)
    monkeypatch.chdir(repo)
    found = _findings(repo, ["src/helpers.py", "src/main.py"], target)
    assert not any(f.rule in ("XLA112", "XLA003") for findings in found.values() for f in findings), found
    assert ("XLA301", 6) in _rules(found["src/helpers.py"], ("XLA301",))
