"""A CUDA availability flag handed as a keyword or positional argument to a project class that picks
the device with that parameter (GRU4REC-pytorch: ``args.cuda = torch.cuda.is_available()`` in main.py,
``lib.GRU4REC(..., use_cuda=args.cuda)`` whose ``__init__`` picks ``torch.device('cuda' if use_cuda else
'cpu')``): in a run on the project the check is dropped (XLA104), so the ported ``'xla' if use_cuda``
picks the XLA device; a check handed as it is there is XLA119's error; a run of the script alone
says that the callee still builds a CUDA device (XLA112)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.executed import convert_folder
from tests.support.projects import write_project

MODEL = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width, use_cuda=False):
        super().__init__()
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.fc = nn.Linear(width, 1)
        self.to(self.device)

    def forward(self, x):
        return self.fc(x)
"""
TRAINER = """import torch


class Trainer:
    def __init__(self, model, opt, use_cuda):
        self.model = model
        self.opt = opt
        self.use_cuda = use_cuda

    def train(self, batches):
        for x, y in batches:
            if self.use_cuda:
                x, y = x.cuda(), y.cuda()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
"""
INIT = "from lib.model import Net\nfrom lib.trainer import Trainer\n"
MAIN = """import torch
import lib

use_cuda = torch.cuda.is_available()
model = lib.Net(4, use_cuda=use_cuda)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
lib.Trainer(model, opt, use_cuda).train([(torch.randn(8, 4), torch.randn(8, 1))])
"""


@pytest.fixture(autouse=True)
def _back_where_it_was(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


FILES = {"lib/__init__.py": INIT, "lib/model.py": MODEL, "lib/trainer.py": TRAINER, "train.py": MAIN}


def _findings(folder: Path, names: list[str], target: str) -> dict[str, list[tuple[str, int, str]]]:
    os.chdir(folder)  # findings name the files from there (the fixture gives each test its folder back)
    job = Job("lint", target, RuleSelection())
    reports = run([(str(folder / n), job) for n in names], workers=1)
    return {str(Path(r.path).relative_to(folder)): [(f.rule, f.line, f.message) for f in r.findings] for r in reports}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_flag_handed_to_a_device_choice_is_switched_on(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    found = _findings(folder, list(FILES), target)
    main = found["train.py"]
    assert [(r, line) for r, line, _ in main] == [("XLA104", 4)]
    assert "`use_cuda` picks the device in `lib.Net` (lib/model.py): its accelerator check is dropped" in main[0][2]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_an_aliased_check_by_position_is_switched_on(tmp_path: Path, target: str) -> None:
    source = (
        MAIN.replace("import torch\n", "import torch as T\n")
        .replace("torch.", "T.")
        .replace("use_cuda = ", "args_cuda = ")
        .replace("use_cuda=use_cuda", "args_cuda")
        .replace("opt, use_cuda)", "opt, args_cuda)")
    )
    folder = write_project(tmp_path / "p", "p", {**FILES, "train.py": source})
    main = _findings(folder, list(FILES), target)["train.py"]
    assert [(r, line) for r, line, _ in main] == [("XLA104", 4)]
    assert "`args_cuda` picks the device in `lib.Net` (lib/model.py)" in main[0][2]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_flag_handed_to_a_parameter_that_picks_no_device_stays(tmp_path: Path, target: str) -> None:
    logger = "class Logger:\n    def __init__(self, verbose=False):\n        self.verbose = verbose\n"
    source = (
        "import torch\nfrom log import Logger\n\nuse_cuda = torch.cuda.is_available()\nlog = Logger(verbose=use_cuda)\n"
    )
    folder = write_project(tmp_path / "p", "p", {"log.py": logger, "train.py": source})
    main = _findings(folder, ["log.py", "train.py"], target)["train.py"]
    assert [(r, line) for r, line, _ in main] == [("XLA105", 4)]


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_check_handed_as_it_is_is_an_error(tmp_path: Path, target: str) -> None:
    source = (
        MAIN.replace("use_cuda = torch.cuda.is_available()\n", "")
        .replace("use_cuda=use_cuda", "use_cuda=torch.cuda.is_available()")
        .replace("opt, use_cuda)", "opt, False)")
    )
    folder = write_project(tmp_path / "p", "p", {**FILES, "train.py": source})
    main = _findings(folder, list(FILES), target)["train.py"]
    assert [(r, line) for r, line, _ in main] == [("XLA119", 4)]
    assert (
        "is handed to `lib.Net` as `use_cuda`" in main[0][2] and "which picks the device with `use_cuda`" in main[0][2]
    )


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_run_of_the_script_alone_names_the_callees(tmp_path: Path, target: str) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    main = _findings(folder, ["train.py"], target)["train.py"]
    assert [(r, line) for r, line, _ in main] == [("XLA104", 4), ("XLA112", 5), ("XLA112", 7)]
    # ``lib.Net`` builds the stepped model there (one finding a line); ``lib.Trainer`` is handed the flag
    assert "comes from `lib.Net()` in lib/model.py, which this run does not convert" in main[1][2]
    assert (
        "`use_cuda`, which the port switches on, goes to `lib.Trainer` in lib/trainer.py, which picks the device"
        in main[2][2]
    )


def test_the_port_is_idempotent(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "p", "p", FILES)
    convert_folder(folder)
    once = {name: (folder / name).read_text() for name in FILES}
    assert "use_cuda = True\n" in once["train.py"]
    assert '"xla" if use_cuda else "cpu"' in once["lib/model.py"]
    convert_folder(folder)
    assert {name: (folder / name).read_text() for name in FILES} == once
