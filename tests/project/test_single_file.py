"""A single-file run whose file uses project modules that the run does not convert: what it
uses of them that holds CUDA code (a device choice, ``.cuda()``, a default tensor type on
CUDA, a training loop or step) is an error at the import, naming the module and saying that
converting the project ports it (issue 32); device-agnostic modules get nothing, and a run
on the whole project nothing of the kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.import_context import outside_project
from codemods.project.resolver import Project
from codemods.project.roots import find_root

TARGETS = ["2.9", "sagemaker"]
PROJECT_RUN = "converting the project (`xla-codemod convert .` at its root) "
PORT = PROJECT_RUN + "would port it"

TRAIN = """\
import torch
{imports}

def main():
    device = torch.device("cuda")
    model = {model}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in range(10):
        optimizer.zero_grad()
        model(torch.randn(2, 4).to(device)).sum().backward()
        optimizer.step()
"""

MODULES = {
    # A device helper: a module-level device that the module's class uses.
    "env.py": """\
import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Buffer:
    def __init__(self):
        self.memory = torch.zeros(8, device=DEVICE)
""",
    # ``.cuda()`` in a class the file builds.
    "nets.py": """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1)
        self.scale = torch.ones(1).cuda()

    def forward(self, x):
        return self.fc(x) * self.scale
""",
    # A default tensor type on CUDA, set by the builder the file calls.
    "builders.py": """\
import torch


def build_model():
    torch.set_default_tensor_type(torch.cuda.HalfTensor)
    return torch.nn.Linear(4, 1)
""",
    # The training loop and its step, in a function the file hands on (pycls's run_net.py).
    "trainer.py": """\
import torch


def train_model(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
""",
    # A pretrained checkpoint loaded without a map location, in a module that never names CUDA.
    "pretrained.py": """\
import torch


def get_vocoder(device):
    vocoder = torch.nn.Conv1d(80, 1, 3)
    vocoder.load_state_dict(torch.load("pretrained/generator.pt"))
    return vocoder.to(device)
""",
    # Device-agnostic: takes the device and moves with it; pure model code.
    "agnostic.py": """\
import torch


class Net(torch.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1).to(device)

    def forward(self, x):
        return self.fc(x)


def to_device(batch, device):
    return batch.to(device)
""",
}


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imports: str, model: str, extra: str = "") -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in MODULES.items():
        (repo / name).write_text(text)
    (repo / "train.py").write_text(TRAIN.format(imports=imports, model=model) + extra)
    monkeypatch.chdir(repo)
    return repo


def _findings(repo: Path, in_run: list[str], target: str) -> list[Finding]:
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / p for p in in_run])
    conversion = convert_source(
        (repo / "train.py").read_bytes(), target=target, imports=project.imports_of(repo / "train.py")
    )
    return [f for f in conversion.findings if f.rule == "XLA003"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_level_device_choice_of_a_used_module_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from env import Buffer", "torch.nn.Linear(4, 1).to(device)")
    (finding,) = _findings(repo, ["train.py"], target)
    assert (
        "what this file uses of env.py, which this run does not convert, holds a CUDA device choice" in finding.message
    )
    assert '`torch.device("cuda" if torch.cuda.is_available() else "cpu")` (line 3)' in finding.message
    assert PORT in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_device_choice_over_several_lines_is_quoted_whole_not_by_its_parenthesis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from config import Config", "torch.nn.Linear(4, 1).to(device)")
    (repo / "config.py").write_text(
        'import torch\n\n\nclass Config(dict):\n    def __init__(self):\n        self["device"] = (\n'
        '            torch.device("cpu")\n            if not torch.cuda.is_available()\n'
        '            else torch.device("cuda")\n        )\n'
    )
    (repo / "train.py").write_text((repo / "train.py").read_text() + "\n\nconfig = Config()\n")
    (finding,) = _findings(repo, ["train.py"], target)
    assert "config.py" in finding.message and "a CUDA device choice" in finding.message
    assert '`Config` has `torch.device("cpu") if not torch.cuda.is_available() else...` (line 7)' in (
        finding.message
    ), finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_an_assert_of_cuda_availability_over_several_lines_is_quoted_and_named_for_what_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from launch import build", "build().to(device)")
    (repo / "launch.py").write_text(
        "import torch\n\n\ndef build():\n    assert (\n        torch.cuda.is_available()\n"
        '    ), "cuda is not available"\n    return torch.nn.Linear(4, 1)\n'
    )
    (finding,) = _findings(repo, ["train.py"], target)
    assert "launch.py" in finding.message and "holds an assert that CUDA is available" in finding.message
    assert "`build` has `assert torch.cuda.is_available()` (line 5)" in finding.message, finding.message
    assert "it fails (AssertionError" in finding.message and "a CUDA device choice" not in finding.message
    assert PORT in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_an_assert_written_like_a_call_is_quoted_with_its_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``assert(torch.cuda.is_available())`` (contrastive-unpaired-translation's networks.py):
    its parentheses dropped, the quote keeps ``assert`` apart from the test."""
    repo = _project(tmp_path, monkeypatch, "from launch import build", "build().to(device)")
    (repo / "launch.py").write_text(
        "import torch\n\n\ndef build():\n    assert(torch.cuda.is_available())\n    return torch.nn.Linear(4, 1)\n"
    )
    (finding,) = _findings(repo, ["train.py"], target)
    assert "`build` has `assert torch.cuda.is_available()` (line 5)" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_statement_opening_a_bracket_is_quoted_with_its_lines_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from nets import build", "build().to(device)")
    (repo / "nets.py").write_text(
        "import torch\n\n\ndef build():\n    net = torch.nn.Linear(4, 1)\n    net.cuda(\n        0\n    )\n"
        "    return net\n"
    )
    (finding,) = _findings(repo, ["train.py"], target)
    assert "`build` has `net.cuda(0)` (line 6)" in finding.message, finding.message
    assert "a CUDA device choice" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_dot_cuda_in_a_class_the_file_builds_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from nets import Net", "Net().to(device)")
    (finding,) = _findings(repo, ["train.py"], target)
    assert "nets.py" in finding.message and "`Net` has `torch.ones(1).cuda()`" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_default_tensor_type_on_cuda_in_a_builder_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "import builders", "builders.build_model().to(device)")
    (finding,) = _findings(repo, ["train.py"], target)
    assert "builders.py" in finding.message and "`build_model` has" in finding.message
    assert "set_default_tensor_type" in finding.message or "HalfTensor" in finding.message, finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_training_loop_handed_on_from_a_module_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    extra = "\n\ndef run(launch):\n    launch(fun=trainer.train_model)\n"
    repo = _project(tmp_path, monkeypatch, "import trainer", "torch.nn.Linear(4, 1).to(device)", extra)
    (finding,) = _findings(repo, ["train.py"], target)
    assert "trainer.py" in finding.message and "a training loop or optimizer step on CUDA terms" in finding.message
    assert "`train_model` has `optimizer.step()`" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_checkpoint_load_without_a_map_location_in_a_used_module_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    extra = "\n\nvocoder = pretrained.get_vocoder(device)\n"
    repo = _project(tmp_path, monkeypatch, "import pretrained", "torch.nn.Linear(4, 1).to(device)", extra)
    (finding,) = _findings(repo, ["train.py"], target)
    assert "pretrained.py" in finding.message and "a checkpoint load without a CPU map location" in finding.message
    assert '`get_vocoder` has `torch.load("pretrained/generator.pt")` (line 6)' in finding.message
    assert PORT in finding.message
    # Converting the project ports the load: the module names no CUDA, its load gets map_location="cpu".
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "pretrained.py"])
    converted = convert_source(
        (repo / "pretrained.py").read_bytes(), target=target, imports=project.imports_of(repo / "pretrained.py")
    )
    assert b'torch.load("pretrained/generator.pt", map_location="cpu")' in converted.output
    assert _findings(repo, ["train.py", "pretrained.py"], target) == []


CACHED_IDS = """\
import os

import torch


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, ids_file, model=None):
        if os.path.exists(ids_file):
            self.ids = torch.load(ids_file)
        else:
            self.ids = {value}
            torch.save({saved}, ids_file)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("value", "saved", "checkpoint"),
    [
        ("list(range(64))", "self.ids", False),
        ("[int(line) for line in open('ids.txt')]", "self.ids", False),
        ('{"train": [1, 2], "val": (3, -4)}', "self.ids", False),
        ("[1, 2]", "{'ids': self.ids, 'count': len(self.ids)}", False),
        # A comprehension over host data (a token cache): its variables are host data too.
        ('{"train": [[i, i + 1, i + 2] for i in range(32)]}', "self.ids", False),
        ("{k: [j for j in range(k)] for k in range(4)}", "self.ids", False),
        # Tensors it builds on the CPU (a processed-data cache): CPU storages load anywhere.
        ("torch.arange(64)", "self.ids", False),
        ("(torch.randn(64, 4).sum(1, keepdim=True) > 0).float()", "(self.ids, torch.cat([self.ids], dim=0))", False),
        # Not host data: a tensor on a device, a model's state, a value the module does not build.
        ("torch.arange(64).cuda()", "self.ids", True),
        ("torch.arange(64, device='cuda')", "self.ids", True),
        ("[1, 2]", "model.state_dict()", True),
        ("[1, 2]", "ids", True),
        ("[p for p in model.parameters()]", "self.ids", True),
        ("[x for x in torch.arange(4).cuda()]", "self.ids", True),
    ],
)
def test_a_reload_of_host_data_the_module_saved_itself_is_no_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, value: str, saved: str, checkpoint: bool
) -> None:
    """``torch.load(ids_file)`` of the file the same class writes with ``torch.save`` of a list of
    ids (or of tensors it builds on the CPU) holds no CUDA storage: a single-file run does not name it, and a run
    on the project leaves it as it is (a Dataset's own cache, reloaded onto the attribute it saves: XLA403's
    dataset_reload_cases).  What may hold a tensor stays an error, and gets ``map_location="cpu"``."""
    repo = _project(tmp_path, monkeypatch, "from pairs import PairDataset", "torch.nn.Linear(4, 1).to(device)")
    (repo / "pairs.py").write_text(CACHED_IDS.format(value=value, saved=saved))
    (repo / "train.py").write_text((repo / "train.py").read_text() + "\ndata = PairDataset('/tmp/ids.pth')\n")
    findings = _findings(repo, ["train.py"], target)
    assert bool(findings) == checkpoint, findings
    if checkpoint:
        assert "a checkpoint load without a CPU map location" in findings[0].message
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "pairs.py"])
    converted = convert_source(
        (repo / "pairs.py").read_bytes(), target=target, imports=project.imports_of(repo / "pairs.py")
    )
    assert (b'torch.load(ids_file, map_location="cpu")' in converted.output) == checkpoint


FACTORY_TRAINER = """\
import torch


class {name}:
    def __init__(self, model, loader):
        self.model = model.to("cuda")
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.loader = loader

    def train(self):
        for x in self.loader:
            self.optimizer.zero_grad()
            self.model(x.cuda()).sum().backward()
            self.optimizer.step()
"""

FACTORIES = {
    # A package's __init__ that never names torch (read with Python's parser).
    "dict": """\
from .base import BaseTrainer

TRAINERS = {{"base": BaseTrainer}}


def trainer_factory(args, model, loader):
    return TRAINERS[args.trainer_code](model, loader){extra}
""",
    # One that names torch (converted in memory): a list of classes, looked up through a name.
    "list": """\
import torch

from .base import BaseTrainer

TRAINERS = [BaseTrainer]


def trainer_factory(args, model, loader):
    cls = TRAINERS[args.index]
    return cls(model, loader){extra}
""",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("factory", sorted(FACTORIES))
@pytest.mark.parametrize("on_cuda", [True, False])
def test_a_trainer_from_a_factory_of_a_package_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, factory: str, on_cuda: bool
) -> None:
    """``trainer_factory(args, ...)`` returns an instance of a class looked up in a module-level
    dict (or list) of classes: a single-file run follows it to the class, as it follows
    ``from trainers.base import BaseTrainer``; a device-agnostic class there gets nothing."""
    repo = _project(tmp_path, monkeypatch, "from trainers import trainer_factory", "torch.nn.Linear(4, 1)")
    (repo / "trainers").mkdir()
    (repo / "trainers" / "__init__.py").write_text(FACTORIES[factory].format(extra=""))
    trainer = FACTORY_TRAINER.format(name="BaseTrainer")
    if not on_cuda:  # ported already, with the target's names (torch_xla 1.13 has no torch_xla.device(), sync())
        device, sync = (
            ("torch_xla.device()", "torch_xla.sync()") if target == "2.9" else ("xm.xla_device()", "xm.mark_step()")
        )
        trainer = trainer.replace('model.to("cuda")', f"model.to({device})").replace("x.cuda()", "x")
        trainer = trainer.replace("self.optimizer.step()", f"xm.optimizer_step(self.optimizer)\n            {sync}")
        trainer = "import torch_xla\nimport torch_xla.core.xla_model as xm\n" + trainer
    (repo / "trainers" / "base.py").write_text(trainer)
    (repo / "train.py").write_text(
        (repo / "train.py").read_text() + "\ntrainer = trainer_factory(args, model, loader)\ntrainer.train()\n"
    )
    findings = _findings(repo, ["train.py"], target)
    if on_cuda:
        (finding,) = findings
        assert "trainers/__init__.py, which this run does not convert" in finding.message
        assert "`BaseTrainer` in trainers/base.py has" in finding.message
    else:
        assert findings == []


NETLIB = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.fc = nn.Linear(cin, cout)

    def forward(self, x):
        pad = torch.cuda.FloatTensor(x.size(0), 2).fill_(0)
        return torch.cat((self.fc(x), pad), 1)


def make_layers(block, widths):
    return nn.Sequential(*[block(a, b) for a, b in zip(widths, widths[1:])])


class PadNet(nn.Module):
    def __init__(self, widths=(4, 6, 8)):
        super().__init__()
        block = Block
        self.layers = nn.Sequential(*[block(a, b) for a, b in zip(widths, widths[1:])])


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = make_layers(Block, (4, 6))


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        block = nn.Linear
        self.layers = nn.Sequential(block(4, 6), nn.ReLU())
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", ["NL.PadNet()", "NL.ResNet()"])
def test_cuda_code_in_a_class_that_a_used_class_builds_through_a_name_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, model: str
) -> None:
    """``block = Block`` then ``block(a, b)`` in ``__init__``, or ``make_layers(Block, ...)``: the used
    class builds ``Block``, whose forward holds CUDA code."""
    repo = _project(tmp_path, monkeypatch, "import netlib as NL", f"{model}.cuda()")
    (repo / "netlib.py").write_text(NETLIB)
    (finding,) = _findings(repo, ["train.py"], target)
    assert "netlib.py" in finding.message and "`Block` has `torch.cuda.FloatTensor(x.size(0), 2)`" in finding.message
    assert _findings(repo, ["train.py", "netlib.py"], target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_used_class_that_builds_only_torch_modules_through_a_name_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "import netlib as NL", "NL.Plain().cuda()")
    (repo / "netlib.py").write_text(NETLIB)
    assert _findings(repo, ["train.py"], target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_device_agnostic_modules_get_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    repo = _project(tmp_path, monkeypatch, "from agnostic import Net, to_device", "Net(device)")
    assert _findings(repo, ["train.py"], target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_the_file_does_not_use_the_cuda_parts_of_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``builders`` holds a CUDA tensor type in ``build_model`` only: ``other`` does not reach it."""
    (tmp_path / "x").mkdir()
    repo = _project(tmp_path, monkeypatch, "from builders import other", "torch.nn.Linear(4, 1).to(device)")
    (repo / "builders.py").write_text(MODULES["builders.py"] + "\n\ndef other():\n    return 1\n")
    assert _findings(repo, ["train.py"], target) == []


# Modules whose conversion reports what it holds, or part of it, instead of porting it:
# (module, its text, what the file imports of it and calls in its loop, what the project run does).
REPORTED_ONLY = {
    # A sparse adjacency matrix moved to CUDA (pygcn's utils): the move is ported, the sparse tensor reported.
    "graph.py": (
        """\
import torch


def adjacency(edges, n):
    values = torch.ones(edges.shape[1])
    return torch.sparse.FloatTensor(edges, values, torch.Size([n, n])).cuda()
""",
        "from graph import adjacency",
        "adjacency(torch.zeros(2, 3, dtype=torch.long), 4)",
        "would port part of it and report the rest there as errors to fix by hand",
    ),
    # Apex mixed precision: reported (no XLA counterpart to write).
    "apex_setup.py": (
        """\
import torch
from apex import amp


def setup(model, optimizer):
    return amp.initialize(model, optimizer, opt_level="O1")
""",
        "from apex_setup import setup",
        "setup(model, optimizer)",
        "would not port it: it reports it there as an error to fix by hand",
    ),
    # A legacy typed constructor kept as a value: reported.
    "legacy.py": (
        """\
import torch

Tensor = torch.cuda.FloatTensor


def noise(n):
    return Tensor(n, 4).normal_()
""",
        "from legacy import noise",
        "noise(2)",
        "would not port it: it reports it there as an error to fix by hand",
    ),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("module", sorted(REPORTED_ONLY))
def test_what_a_project_run_would_only_report_is_not_said_to_be_ported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, module: str
) -> None:
    text, imports, call, project_run = REPORTED_ONLY[module]
    repo = _project(tmp_path, monkeypatch, imports, "torch.nn.Linear(4, 1).to(device)", f"\n\nused = {call}\n")
    (repo / module).write_text(text)
    (finding,) = _findings(repo, ["train.py"], target)
    assert module in finding.message and PROJECT_RUN + project_run in finding.message, finding.message
    assert PORT not in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_run_on_the_whole_project_reports_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    imports = "from env import Buffer\nfrom nets import Net\nimport builders\nimport trainer"
    extra = "\n\ndef run(launch):\n    launch(fun=trainer.train_model)\n"
    repo = _project(tmp_path, monkeypatch, imports, "Net().to(device)", extra)
    assert _findings(repo, ["train.py", *MODULES], target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_file_without_torch_that_hands_on_a_modules_training_loop_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """pycls's tools/run_net.py names no torch: ``dist.multi_proc_run(fun=trainer.train_model)``."""
    repo = _project(tmp_path, monkeypatch, "", "torch.nn.Linear(4, 1)")
    (repo / "run.py").write_text("import trainer\n\n\ndef main(launch):\n    launch(fun=trainer.train_model)\n")
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "run.py"])
    conversion = convert_source(
        (repo / "run.py").read_bytes(), target=target, imports=project.imports_of(repo / "run.py")
    )
    (finding,) = conversion.findings
    assert finding.rule == "XLA003" and finding.line == 1 and "trainer.py" in finding.message
    assert conversion.output == conversion.source
    # Run with the module it imports, it is skipped unparsed as before.
    project = Project(
        repo, summarise_with(target, RuleSelection(), None), in_run=[repo / "run.py", repo / "trainer.py"]
    )
    assert (
        convert_source(
            (repo / "run.py").read_bytes(), target=target, imports=project.imports_of(repo / "run.py")
        ).findings
        == []
    )


@pytest.mark.parametrize("target", TARGETS)
def test_names_of_a_star_import_are_followed_through_the_package_and_base_classes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """DeepCTR-Torch: ``from deepctr_torch.models import *``; ``DeepFM(...).fit(...)``, the loop in ``BaseModel.fit``
    (a script that never calls ``fit`` does not reach it: tests/project/test_single_file_reach.py)."""
    extra = "\n\ndef fit_all(batches):\n    net = DeepFM()\n    net.fit(batches)\n"
    repo = _project(tmp_path, monkeypatch, "from models import *", "DeepFM().to(device)", extra)
    package = repo / "models"
    package.mkdir()
    (package / "__init__.py").write_text("from .deepfm import DeepFM\n")
    (package / "deepfm.py").write_text(
        "import torch\n\nfrom .basemodel import BaseModel\n\n\nclass DeepFM(BaseModel):\n    pass\n"
    )
    (package / "basemodel.py").write_text(
        "import torch\n\n\nclass BaseModel(torch.nn.Module):\n"
        "    def fit(self, batches):\n"
        "        optim = torch.optim.SGD(self.parameters(), lr=0.1)\n"
        "        for x in batches:\n"
        "            optim.zero_grad()\n"
        "            self(x).sum().backward()\n"
        "            optim.step()\n"
    )
    (finding,) = _findings(repo, ["train.py"], target)
    assert finding.message.startswith(
        "`net.fit` runs a training loop in models/basemodel.py, which still needs converting"
    )


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_level_device_that_the_used_function_does_not_read_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from env import average", "torch.nn.Linear(4, 1).to(device)")
    (repo / "env.py").write_text(MODULES["env.py"] + "\n\ndef average(values):\n    return sum(values) / len(values)\n")
    assert _findings(repo, ["train.py"], target) == []


def test_a_copy_without_git_is_rooted_at_its_setup_py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pycls as a copy without .git: tools/run_net.py imports the package next to setup.py."""
    repo = tmp_path / "pycls"
    (repo / "tools").mkdir(parents=True)
    (repo / "pkg").mkdir()
    (repo / "setup.py").write_text("from setuptools import setup\n\nsetup(name='pkg')\n")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "trainer.py").write_text(MODULES["trainer.py"])
    (repo / "tools" / "run.py").write_text(
        "import pkg.trainer as trainer\n\n\ndef main(launch):\n    launch(fun=trainer.train_model)\n"
    )
    monkeypatch.chdir(repo)
    assert find_root(repo / "tools" / "run.py") == repo
    project = Project(repo, summarise_with("2.9", RuleSelection(), None), in_run=[repo / "tools" / "run.py"])
    script = repo / "tools" / "run.py"
    (finding,) = convert_source(script.read_bytes(), target="2.9", imports=project.imports_of(script)).findings
    assert "pkg/trainer.py" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_project_package_whose_name_starts_with_torch_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """``torchkit``, ``torch_utils``: a project's own package, not torch's family."""
    repo = _project(tmp_path, monkeypatch, "from torchkit.nets import Net", "Net().to(device)")
    (repo / "torchkit").mkdir()
    (repo / "torchkit" / "__init__.py").write_text("")
    (repo / "torchkit" / "nets.py").write_text(MODULES["nets.py"])
    (finding,) = _findings(repo, ["train.py"], target)
    assert "torchkit/nets.py" in finding.message and "`Net` has `torch.ones(1).cuda()`" in finding.message
    assert outside_project("torchvision.models") and outside_project("torch_xla.core.xla_model")
    assert not outside_project("torchkit.nets")


# A model whose attention block takes FlashAttention by default (consistency_models' unet), built by a
# factory module that names no torch: its functions call one another (``create_model_and_loss`` calls
# ``create_model``), which a run reads with Python's own parser.
FLASH_BLOCKS = """\
import torch


class Attention(torch.nn.Module):
    def __init__(self, dim, kind="flash"):
        super().__init__()
        self.inner = FlashBlock(dim) if kind == "flash" else torch.nn.Identity()


class FlashBlock(torch.nn.Module):
    def __init__(self, dim):
        from flash_attn.flash_attention import FlashAttention

        super().__init__()
        self.inner = FlashAttention()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention(4)
"""

FACTORY = """\
from blocks import Net


def create_model_and_loss(kind):
    return create_model(), kind


def create_model():
    return Net()


def defaults():
    return dict(lr=0.1)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_cuda_only_library_reached_through_a_factory_module_without_torch_is_an_error_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """The factory's ``create_model_and_loss`` calls its own ``create_model``, which builds ``Net``,
    whose attention takes FlashAttention (a CUDA kernel) by default."""
    repo = _project(tmp_path, monkeypatch, "from factory import create_model_and_loss", "Net().to(device)")
    (repo / "blocks.py").write_text(FLASH_BLOCKS)
    (repo / "factory.py").write_text(FACTORY)
    (finding,) = _findings(repo, ["train.py"], target)
    assert "factory.py" in finding.message, finding.message
    assert "`FlashBlock` in blocks.py has `FlashAttention`" in finding.message
    assert PROJECT_RUN + "would not port it" in finding.message
    assert _findings(repo, ["train.py", "factory.py", "blocks.py"], target) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_of_a_factory_module_without_torch_that_reaches_no_cuda_code_gets_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    repo = _project(tmp_path, monkeypatch, "from factory import defaults", "torch.nn.Linear(4, 1).to(device)")
    (repo / "blocks.py").write_text(FLASH_BLOCKS)
    (repo / "factory.py").write_text(FACTORY)
    assert _findings(repo, ["train.py"], target) == []
