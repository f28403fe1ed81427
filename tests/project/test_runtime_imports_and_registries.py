"""Training code a single-file run cannot follow (the thirteenth held-out list, issue 32): a project
module imported by a name built at run time through ``exec`` of an import statement or ``__import__``
(SELFRec's ``exec(f"from model.{kind}.{name} import {name}")`` then ``eval(f"{name}(conf)")``), and a
training function looked up in a registry that project modules imported for their side effects fill
(GraphGPS's ``train_dict[cfg.train.mode](loggers, loaders, model, optimizer, scheduler)`` with
``@register_train("custom")``).  A single-file run says so (XLA003, naming the package or the modules);
a run on the project converts the modules and says nothing at the ``exec`` or the registry call."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODEL = """\
import torch
import torch.nn as nn


class GraphRec:
    def __init__(self, conf):
        self.model = nn.Linear(4, 2)

    def train(self):
        model = self.model.cuda()
        opt = torch.optim.Adam(model.parameters())
        for x in [torch.randn(8, 4)]:
            opt.zero_grad()
            model(x.cuda()).sum().backward()
            opt.step()
"""

# How the recommender's ``execute`` imports the model module, by the name the config gives.
LOADS = {
    "exec-bound-name": (
        "        import_str = f\"from model.{self.conf['type']}.{self.conf['name']} import {self.conf['name']}\"\n"
        "        exec(import_str)\n"
        "        eval(f\"{self.conf['name']}(self.conf)\").train()\n"
    ),
    "exec-inline": (
        '        exec("from model." + self.conf[\'type\'] + "." + self.conf[\'name\'] + " import *")\n'
        "        eval(f\"{self.conf['name']}(self.conf)\").train()\n"
    ),
    "dunder-import": (
        "        module = __import__(f\"model.{self.conf['type']}.{self.conf['name']}\", fromlist=['x'])\n"
        "        getattr(module, self.conf['name'])(self.conf).train()\n"
    ),
}

REC = """\
class Rec:
    def __init__(self, conf):
        self.conf = conf

    def execute(self):
{load}"""

MAIN = """\
from rec import Rec

conf = {"type": "graph", "name": input()}
rec = Rec(conf)
rec.execute()
"""


def _converted(folder: Path, names: list[str], target: str) -> dict[str, str]:
    """The files converted as one run on ``target`` (each sees the others' summaries): name -> output."""
    files = [folder / name for name in names]
    project = Project(folder, summarise_with(target, RuleSelection(), None), in_run=files)
    return {
        name: str(convert_source(path.read_text(), target=target, imports=project.imports_of(path)).output)
        for name, path in zip(names, files)
    }


def _recommender(tmp_path: Path, load: str) -> Path:
    return write_project(
        tmp_path / "proj",
        "proj",
        {"model/graph/GraphRec.py": MODEL, "rec.py": REC.format(load=LOADS[load]), "main.py": MAIN},
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("load", sorted(LOADS))
def test_single_file_run_of_the_loading_module_names_the_package(tmp_path: Path, target: str, load: str) -> None:
    repo = _recommender(tmp_path, load)
    found = unfixed_findings(repo, ["rec.py"], target)["rec.py"]
    assert [(rule, line) for rule, line, _ in found] == [("XLA003", 7 if load == "exec-bound-name" else 6)]
    message = found[0][2]
    assert "the modules of the `model` package" in message and "model/graph/GraphRec.py" in message
    assert "`self.model.cuda()`" in message and "`opt.step()`" in message
    assert "converting the project (`xla-codemod convert .` at its root) would port it" in message


@pytest.mark.parametrize("target", TARGETS)
def test_single_file_run_of_the_script_names_the_package(tmp_path: Path, target: str) -> None:
    """The script reaches the ``exec`` through the recommender's method: the error names the package."""
    repo = _recommender(tmp_path, "exec-bound-name")
    found = unfixed_findings(repo, ["main.py"], target)["main.py"]
    assert [(rule, line) for rule, line, _ in found] == [("XLA003", 1)]
    assert "which imports a module of the project's `model` package" in found[0][2]
    assert "`exec(import_str)`" in found[0][2]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("load", sorted(LOADS))
def test_project_run_converts_the_loaded_modules(tmp_path: Path, target: str, load: str) -> None:
    repo = _recommender(tmp_path, load)
    names = ["model/graph/GraphRec.py", "rec.py", "main.py"]
    assert unfixed_findings(repo, names, target) == {"GraphRec.py": [], "rec.py": [], "main.py": []}
    converted = _converted(repo, names, target)
    model = converted["model/graph/GraphRec.py"]
    assert ".cuda()" not in model and "optimizer_step(opt)" in model
    assert converted["rec.py"] == REC.format(load=LOADS[load])  # (the exec line stays as written)


def test_exec_of_code_without_an_import_loads_nothing(tmp_path: Path) -> None:
    load = (
        "        exec(f\"print({self.conf['name']!r})\")\n        eval(f\"{self.conf['name']}(self.conf)\").train()\n"
    )
    repo = write_project(tmp_path / "proj", "proj", {"model/graph/GraphRec.py": MODEL, "rec.py": REC.format(load=load)})
    assert unfixed_findings(repo, ["rec.py"], "2.9") == {"rec.py": []}


TRAIN = """\
import torch
from torch_geometric.graphgym.register import register_train


@register_train("custom")
def custom_train(loggers, loaders, model, optimizer, scheduler):
    for x in loaders[0]:
        optimizer.zero_grad()
        model(x.cuda()).sum().backward()
        optimizer.step()
"""

# The package's train/__init__.py makes its modules importable by a scan of its folder.
SCANNED = """\
from os.path import basename, dirname, isfile, join
import glob

modules = glob.glob(join(dirname(__file__), "*.py"))
__all__ = [basename(f)[:-3] for f in modules if isfile(f) and not f.endswith("__init__.py")]
"""

SCRIPT = """\
import torch
{import_}
from torch_geometric.graphgym.register import train_dict
from torch_geometric.graphgym.config import cfg

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters())
train_dict[cfg.train.mode]([], [[torch.randn(8, 4)]], model, optimizer, None)
"""


def _registry(tmp_path: Path, import_: str) -> tuple[Path, list[str]]:
    files = {
        "mypkg/__init__.py": "from .train import *  # noqa\n",
        "mypkg/train/__init__.py": SCANNED,
        "mypkg/train/custom.py": TRAIN,
        "main.py": SCRIPT.format(import_=import_),
    }
    return write_project(tmp_path / "proj", "proj", files), list(files)


@pytest.mark.parametrize("target", TARGETS)
def test_single_file_run_reports_the_registry_call(tmp_path: Path, target: str) -> None:
    repo, _ = _registry(tmp_path, "import mypkg  # noqa, registers the trainers")
    found = unfixed_findings(repo, ["main.py"], target)["main.py"]
    registry = [message for rule, line, message in found if rule == "XLA003" and line == 8]
    assert len(registry) == 1, found
    assert "looked up in the registry `train_dict`" in registry[0] and "mypkg/__init__.py" in registry[0]
    assert "converts the registered functions" in registry[0]


@pytest.mark.parametrize("target", TARGETS)
def test_project_run_converts_the_registered_function(tmp_path: Path, target: str) -> None:
    repo, names = _registry(tmp_path, "import mypkg  # noqa, registers the trainers")
    assert all(not found for found in unfixed_findings(repo, names, target).values())
    custom = _converted(repo, names, target)["mypkg/train/custom.py"]
    assert ".cuda()" not in custom and "optimizer_step(optimizer)" in custom


def test_registry_call_without_a_side_effect_import_is_the_library_s(tmp_path: Path) -> None:
    """No project module is imported for its side effects: the registry holds the library's own functions."""
    repo, _ = _registry(tmp_path, "")
    found = unfixed_findings(repo, ["main.py"], "2.9")["main.py"]
    assert not [message for _, _, message in found if "registry" in message]


def test_registry_call_handed_no_optimizer_trains_nothing_of_the_script(tmp_path: Path) -> None:
    """An evaluation script that looks a head up in a registry (``heads[name](x)``): no optimizer goes there."""
    script = (
        "import torch\nimport mypkg  # noqa\nfrom torch_geometric.graphgym.register import head_dict\n\n"
        "x = torch.randn(2, 4)\nprint(head_dict['san'](x))\n"
    )
    repo, _ = _registry(tmp_path, "import mypkg  # noqa")
    (repo / "main.py").write_text(script)
    found = unfixed_findings(repo, ["main.py"], "2.9")["main.py"]
    assert not [message for _, _, message in found if "registry" in message]
