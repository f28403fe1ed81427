"""The loop that drives an optimizer step of another module, where the tool cannot tell the class of
the step's receiver (obligation 4, issue 32): a model built through a registry (``build_model(opt)``
returns ``REGISTRY.get(opt["type"])(opt)``) or looked up by name (``getattr(model_zoo, name)(...)``)
whose method is named like a project method that takes a step is driven by the loop that calls it (the
barrier goes there; a single-file run says that the method, in a module it does not convert, trains:
XLA003); a method a class inherits from a project base (of its module, or of another) runs the base's
step; a call in a test file drives nothing.  A receiver whose class the tool knows (a class of the
project that takes no step, a library's estimator) and a method name no stepping project method has
get nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project
from tests.support.training_programs import REGISTRY, REGISTRY_MODELS_INIT

TARGETS = ["2.9", "sagemaker"]

SR_MODEL = """\
import torch

from registry import MODELS


@MODELS.register
class SRModel:
    def __init__(self, opt):
        self.device = torch.device("cuda")
        self.net = torch.nn.Linear(4, 2).to(self.device)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def feed_data(self, data):
        self.lq = data.to(self.device)

    def optimize_parameters(self, current_iter):
        self.optimizer.zero_grad()
        self.net(self.lq).pow(2).mean().backward()
        self.optimizer.step()
"""

TRAIN = """\
import torch

from models import build_model


def main(opt, loader):
    model = build_model(opt)
    current_iter = 0
    for epoch in range(3):
        for data in loader:
            current_iter += 1
            model.feed_data(data)
            model.optimize_parameters(current_iter)
"""

# A model module that no file imports (the folder scan loads it), whose step only a loop calling
# ``optimize_parameters`` by name drives.
GAN_MODEL = SR_MODEL.replace("SRModel", "GANModel").replace("mean()", "sum()")

UNIT_TEST = """\
import torch

from models.sr_model import SRModel


def test_sr_model():
    model = SRModel({})
    model.feed_data(torch.randn(8, 4))
    model.optimize_parameters(1)
"""

# A base class whose step methods a subclass inherits (of the same module).
TRAINERS = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def optimize(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def mlm_step(self, x):
        self.optimize(self.model(x.cuda()).sum())


class SingleTrainer(Trainer):
    pass


class EncDecTrainer(Trainer):
    def mt_step(self, x):
        self.optimize(self.model(x.cuda()).mean())
"""

XLM_TRAIN = """\
import torch

from trainers import EncDecTrainer, SingleTrainer


def main(params):
    model = torch.nn.Linear(4, 2)
    if params.encoder_only:
        trainer = SingleTrainer(model)
    else:
        trainer = EncDecTrainer(model)
    for epoch in range(3):
        for x in params.mlm:
            trainer.mlm_step(x)
        for x in params.mt:
            trainer.mt_step(x)
"""

# A class of the script that inherits the project's step methods.
SUBCLASS_TRAIN = """\
import torch

from trainers import EncDecTrainer


class LoggedTrainer(EncDecTrainer):
    def log(self):
        return self.model


def main(batches):
    trainer = LoggedTrainer(torch.nn.Linear(4, 2))
    for x in batches:
        trainer.mlm_step(x)
        trainer.mt_step(x)
        trainer.log()
"""

# A library of models whose base class trains in its ``fit`` (through ``train_epoch``); the script picks
# the model by name.
BASE_MODEL = """\
import torch
from torch import nn


class BaseModel(nn.Module):
    def __init__(self, gpu=-1):
        super().__init__()
        self.device = torch.device("cuda:" + str(gpu)) if gpu >= 0 else torch.device("cpu")

    def fit(self, data, epochs=1):
        self.optimizer = torch.optim.Adam(self.parameters())
        for epoch in range(epochs):
            self.train_epoch(data)

    def train_epoch(self, data):
        for x, y in data:
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self(x.to(self.device)), y.to(self.device)).backward()
            self.optimizer.step()


class Plain:
    def fit(self, data):
        return len(data)
"""

ZOO_INIT = "from .dcn import DCN\n"

ZOO_DCN = """\
from torch import nn

from mylib.models import BaseModel


class DCN(BaseModel):
    def __init__(self, gpu=-1):
        super().__init__(gpu)
        self.fc = nn.Linear(4, 1)
        self.to(self.device)

    def forward(self, x):
        return self.fc(x)
"""

RUN_EXPID = """\
import model_zoo

if __name__ == "__main__":
    params = {{"model": "DCN", "gpu": 0}}
    {build}
    model.fit([], epochs=2)
"""


def _files(folder: Path, files: dict[str, str]) -> Path:
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
    return write_project(folder, "proj", files)


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[Finding]]:
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in names], workers=1)
    return {Path(r.path).resolve().relative_to(folder.resolve()).as_posix(): r.findings for r in reports}


def _rules(findings: list[Finding]) -> list[tuple[str, int]]:
    return sorted((f.rule, f.line) for f in findings if f.rule in ("XLA003", "XLA301", "XLA305", "XLA306"))


@pytest.fixture
def registry_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    files = {
        "registry.py": REGISTRY,
        "models/__init__.py": REGISTRY_MODELS_INIT,
        "models/sr_model.py": SR_MODEL,
        "models/gan_model.py": GAN_MODEL,
        "train.py": TRAIN,
        "tests/test_sr_model.py": UNIT_TEST,
    }
    return _files(tmp_path, files)


@pytest.mark.parametrize("target", TARGETS)
def test_a_registry_models_step_is_driven_by_the_loop_that_calls_it_by_name(
    registry_project: Path, target: str
) -> None:
    names = ["registry.py", "models/__init__.py", "models/sr_model.py", "models/gan_model.py", "train.py"]
    found = _findings(registry_project, [*names, "tests/test_sr_model.py"], target)
    assert _rules(found["train.py"]) == [("XLA301", 10)]
    assert all(_rules(found[name]) == [] for name in names if name != "train.py"), found


@pytest.mark.parametrize("target", TARGETS)
def test_a_call_in_a_test_file_drives_no_step(registry_project: Path, target: str) -> None:
    names = ["registry.py", "models/__init__.py", "models/sr_model.py", "models/gan_model.py", "tests/test_sr_model.py"]
    found = _findings(registry_project, names, target)
    (undriven,) = [f for f in found["models/sr_model.py"] if f.rule == "XLA306"]
    assert undriven.line == 19
    assert "`self.optimizer.step()` in `SRModel.optimize_parameters` has no step barrier" in undriven.message
    (unimported,) = [f for f in found["models/gan_model.py"] if f.rule == "XLA306"]
    assert (
        "no loop of this file calls `GANModel.optimize_parameters`, no other file of this run imports this one, and "
        "none of their loops calls a method of that name on a value whose class the tool cannot tell"
        in unimported.message
    ), unimported.message
    assert _rules(found["tests/test_sr_model.py"]) == []  # a unit test runs its step once


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_drives_a_registry_models_step_and_says_it_is_not_converted(
    registry_project: Path, target: str
) -> None:
    found = _findings(registry_project, ["train.py"], target)["train.py"]
    assert _rules(found) == [("XLA003", 13), ("XLA301", 10)]
    (named,) = [f for f in found if f.rule == "XLA003"]
    assert (
        "`model` comes from `build_model`, which picks its class among modules it imports by a name known only at "
        'run time (`importlib.import_module("models." + file_name[:-3])` (line 8) in models/__init__.py): no run on '
        "one file can tell which modules of models/ it loads, nor the class of `model`, and "
        "`GANModel.optimize_parameters` and "
        "`SRModel.optimize_parameters` of the project, named like `model.optimize_parameters`, take training steps "
        "in models/gan_model.py and models/sr_model.py, which this run does not convert" in named.message
    ), named.message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["trainers.py", "train.py"], ["train.py"]], ids=["whole", "single"])
def test_a_step_method_inherited_from_a_base_of_its_module_is_driven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _files(tmp_path, {"trainers.py": TRAINERS, "train.py": XLM_TRAIN})
    found = _findings(folder, names, target)
    assert [rule for rule in _rules(found["train.py"]) if rule[0] != "XLA003"] == [("XLA301", 13), ("XLA301", 15)]
    assert _rules(found.get("trainers.py", [])) == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("names", [["trainers.py", "train.py"], ["train.py"]], ids=["whole", "single"])
def test_a_step_method_a_class_of_the_script_inherits_from_a_project_class_is_driven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, names: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _files(tmp_path, {"trainers.py": TRAINERS, "train.py": SUBCLASS_TRAIN})
    found = _findings(folder, names, target)
    assert [rule for rule in _rules(found["train.py"]) if rule[0] != "XLA003"] == [("XLA301", 13)]
    assert _rules(found.get("trainers.py", [])) == []


def _zoo(tmp_path: Path, build: str) -> Path:
    files = {
        "mylib/__init__.py": "",
        "mylib/models.py": BASE_MODEL,
        "model_zoo/__init__.py": ZOO_INIT,
        "model_zoo/dcn.py": ZOO_DCN,
        "experiment/run_expid.py": RUN_EXPID.format(build=build),
    }
    return _files(tmp_path, files)


@pytest.mark.parametrize("target", TARGETS)
def test_a_model_looked_up_by_name_whose_fit_is_a_project_training_loop_is_an_error_in_a_single_file_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _zoo(tmp_path, 'model = getattr(model_zoo, params["model"])(gpu=params["gpu"])')
    (named,) = _findings(folder, ["experiment/run_expid.py"], target)["experiment/run_expid.py"]
    assert (named.rule, named.line) == ("XLA003", 6)
    assert (
        "the tool cannot tell the class of `model`, and `BaseModel.fit` of the project, named like `model.fit`, "
        "runs a training loop in mylib/models.py, which this run does not convert" in named.message
    ), named.message
    whole = ["mylib/__init__.py", "mylib/models.py", "model_zoo/__init__.py", "model_zoo/dcn.py"]
    found = _findings(folder, [*whole, "experiment/run_expid.py"], target)
    assert _rules(found["experiment/run_expid.py"]) == []  # its loop is converted where it is
    assert _rules(found["mylib/models.py"]) == [("XLA301", 16)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "build",
    [
        "model = model_zoo.DCN(gpu=0)\n    model = Plain()",  # a class of the project that takes no step
        "from sklearn.linear_model import LinearRegression\n    model = LinearRegression()",  # a library's
        "model = getattr(model_zoo, params['model'])()\n    model.update([])",  # a generic name
    ],
    ids=["project-class", "library-class", "generic-name"],
)
def test_a_receiver_of_a_known_class_or_a_generic_method_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _zoo(tmp_path, build)
    script = folder / "experiment" / "run_expid.py"
    script.write_text(
        script.read_text()
        .replace("import model_zoo\n", "import model_zoo\nfrom mylib.models import Plain\n")
        .replace("    model.fit([], epochs=2)\n", "    model.fit([])\n" if "update" not in build else "")
    )
    found = _findings(folder, ["experiment/run_expid.py"], target)["experiment/run_expid.py"]
    assert [f for f in found if f.rule == "XLA003" and "cannot tell the class" in f.message] == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_no_stepping_project_method_is_named_like_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _zoo(tmp_path, 'model = getattr(model_zoo, params["model"])(gpu=params["gpu"])')
    script = folder / "experiment" / "run_expid.py"
    script.write_text(script.read_text().replace("model.fit([], epochs=2)", "model.count_parameters()"))
    assert _findings(folder, ["experiment/run_expid.py"], target)["experiment/run_expid.py"] == []
