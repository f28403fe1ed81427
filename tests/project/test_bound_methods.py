"""A method bound onto a class at run time (the fifteenth held-out list's torchdistill shape): the step
lives in a function that a registry's decorator registers (``@register_post_forward def
default_post(self, loss): ... self.optimizer.step()``), and the box class gets it with
``setattr(Box, "post_forward_process", post)``, where ``post`` is that function or, under a config
switch, what the registry's getter returns; the script's loop calls ``box.post_forward_process(loss=loss)``
on a box handed in.  That loop drives the step (obligation 4): its loader becomes a device loader, which
ends each step, in a whole run and a single-file one, and neither module with the step is reported undriven.  A function bound that takes no
step, or bound under another name, makes the loop drive nothing.

A single-file run of a script whose loop calls a project's step function, beside an import whose module
loads modules named at run time (a YAML tag helper's ``importlib.import_module``), has its training loop
in this file: XLA003 does not say the loop is most likely in the module it imports (it still says so for
a script with no training loop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

TARGETS = ["2.9", "sagemaker"]

REGISTRY = """\
POST_FORWARD = {}


def register_post_forward(func):
    POST_FORWARD[func.__name__] = func
    return func


def get_post_forward(key):
    return POST_FORWARD[key]
"""

POST = """\
from registry import register_post_forward


@register_post_forward
def default_post(self, loss):
    self.optimizer.zero_grad()
    loss.backward()
    self.optimizer.step()
"""

BOX = """\
import torch

from post import default_post
from registry import get_post_forward


class Box:
    def __init__(self, model, device, cfg):
        self.model = model.to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.setup(cfg)

    def setup(self, cfg):
        post = default_post
        if "post" in cfg:
            post = get_post_forward(cfg["post"])
        setattr(Box, "post_forward_process", post)

    def forward_process(self, x, y):
        return torch.nn.functional.mse_loss(self.model(x), y)
"""

TRAIN = """\
import torch

from box import Box


def train_one_epoch(box, loader, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = box.forward_process(x, y)
        box.post_forward_process(loss=loss)
        print(loss.item())


def main(loader):
    device = torch.device("cuda")
    box = Box(torch.nn.Linear(4, 1), device, {})
    train_one_epoch(box, loader, device)
"""

# The function bound takes no step (it keeps the loss): the loop trains nothing.
KEEPING_POST = """\
def default_post(self, loss):
    self.losses.append(loss.detach())
"""

CFG = """\
import importlib

import yaml


def import_get(key):
    module, name = key.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def load_yaml(path):
    yaml.add_constructor("!import_get", lambda loader, node: import_get(loader.construct_scalar(node)))
    with open(path) as f:
        return yaml.load(f, Loader=yaml.FullLoader)
"""

STEPS = """\
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss
"""

YAML_TRAIN = """\
import torch

from cfg import load_yaml
from steps import train_step


def main(path, loader):
    config = load_yaml(path)
    device = torch.device("cuda")
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = train_step(model, optimizer, x, y)
        print(loss.item())
"""

# No training loop here: what the config names (``import_get``) may hold it.
YAML_RUN = """\
import torch

from cfg import import_get, load_yaml


def main(path):
    config = load_yaml(path)
    trainer = import_get(config["trainer"])(torch.device("cuda"))
    trainer.fit()
"""


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[Finding]]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).resolve().relative_to(folder.resolve()).as_posix(): r.findings for r in reports}


def _rules(findings: list[Finding]) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings if f.rule in ("XLA301", "XLA302", "XLA305", "XLA306"))


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **changed: str) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {"registry.py": REGISTRY, "post.py": POST, "box.py": BOX, "train.py": TRAIN}
    return write_project(tmp_path, "proj", {**files, **{f"{name}.py": text for name, text in changed.items()}})


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "names", [["registry.py", "post.py", "box.py", "train.py"], ["train.py"]], ids=["whole", "single"]
)
def test_a_loop_calling_a_method_bound_at_run_time_to_a_step_function_ends_each_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    found = _findings(_project(tmp_path, monkeypatch), names, target)
    assert _rules(found["train.py"]) == [("XLA302", 7)], found["train.py"]
    assert all(_rules(found[name]) == [] for name in names if name != "train.py"), found


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_bound_by_a_class_itself_in_its_init_is_followed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    box = BOX.replace(
        "        self.setup(cfg)\n", '        setattr(self.__class__, "post_forward_process", default_post)\n'
    )
    found = _findings(_project(tmp_path, monkeypatch, box=box), ["box.py", "train.py"], target)
    assert _rules(found["train.py"]) == [("XLA302", 7)], found["train.py"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "changed",
    [
        {"post": KEEPING_POST},
        {"box": BOX.replace('"post_forward_process"', '"post_process"')},
    ],
    ids=["bound-function-takes-no-step", "bound-under-another-name"],
)
def test_a_bound_function_that_takes_no_step_or_another_name_drives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, changed: dict[str, str]
) -> None:
    folder = _project(tmp_path, monkeypatch, **changed)
    found = _findings(folder, ["registry.py", "post.py", "box.py", "train.py"], target)
    assert _rules(found["train.py"]) == [], found["train.py"]


def _dynamic_import_claims(findings: list[Finding]) -> list[int]:
    return [f.line for f in findings if f.rule == "XLA003" and "most likely in the module it imports" in f.message]


@pytest.mark.parametrize("target", TARGETS)
def test_a_script_with_a_training_loop_is_not_told_its_loop_is_in_a_runtime_imported_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = write_project(
        tmp_path, "proj", {"cfg.py": CFG, "steps.py": STEPS, "train.py": YAML_TRAIN, "run.py": YAML_RUN}
    )
    assert _dynamic_import_claims(_findings(folder, ["train.py"], target)["train.py"]) == []
    (claim,) = [f for f in _findings(folder, ["run.py"], target)["run.py"] if f.rule == "XLA003"]
    assert claim.line == 3 and "most likely in the module it imports" in claim.message, claim
    assert "`import_get` has `importlib.import_module(module)` (line 8)" in claim.message, claim.message
