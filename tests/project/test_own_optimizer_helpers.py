"""A module class that builds its optimizer over its own parameters in ``__init__``, moved
by a callable of another project module that moves what it is handed (``model =
to_gpu(Net())``, ``to_gpu`` in utils.py): on XLA the move replaces the Parameter objects,
so the optimizer steps the CPU copies (XLA203 at the move, in a run that converts the
helper's module); a single-file run, which leaves the helper's CUDA code as it is, names
the module instead (XLA003); helpers that keep the module on the CPU strand nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run

_UTILS = """import torch


def to_gpu(x):
    if torch.cuda.is_available():
        return x.cuda()
    return x


def to_device(x, device):
    return x.to(device)


def keep_on_cpu(x):
    return x.to("cpu")
"""
_NETS = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.fc(x)
"""
_TRAIN = """import torch

from nets import Net
from utils import to_gpu

{build}
for step in range(10):
    x = to_gpu(torch.randn(8, 4))
    loss = model(x).pow(2).mean()
    model.optimizer.zero_grad()
    loss.backward()
    model.optimizer.step()
"""


def _findings(folder: Path, files: dict[str, str], converted: tuple[str, ...], target: str) -> dict[str, list[str]]:
    """The findings of XLA203 and XLA003 in each converted file: "CODE line: message"."""
    (folder / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    job = Job("check", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in converted], workers=1)
    return {
        Path(report.path).name: [
            f"{f.rule} {f.line}: {f.message}" for f in report.findings if f.rule in ("XLA203", "XLA003")
        ]
        for report in reports
    }


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    ("build", "line", "move"),
    [
        ("model = to_gpu(Net())", 6, "`to_gpu(Net())` moves `model`"),
        ("model = Net()\nto_gpu(model)", 7, "`to_gpu(model)` moves `model`"),
        ("model = Net()\nmodel = to_gpu(model)", 7, "`to_gpu(model)` moves `model`"),
    ],
)
def test_a_move_through_a_helper_of_another_module_strands_the_optimizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str, line: int, move: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"utils.py": _UTILS, "nets.py": _NETS, "train.py": _TRAIN.format(build=build)}
    found = _findings(tmp_path, files, tuple(files), target)
    (finding,) = found["train.py"]
    assert finding.startswith(
        f"XLA203 {line}: {move} to the XLA device through `to_gpu` (utils.py) after `Net.__init__`"
    )
    assert "(nets.py) built `self.optimizer` over the instance's own parameters" in finding
    assert found["utils.py"] == [] and found["nets.py"] == []


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_single_file_run_names_the_helper_module_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """Converted alone, train.py keeps utils.py's guarded ``x.cuda()``: the model stays on the
    CPU, so XLA203 would be false; XLA003 says that converting the project ports the helper."""
    monkeypatch.chdir(tmp_path)
    files = {"utils.py": _UTILS, "nets.py": _NETS, "train.py": _TRAIN.format(build="model = to_gpu(Net())")}
    (finding,) = _findings(tmp_path, files, ("train.py",), target)["train.py"]
    assert finding.startswith("XLA003 4: what this file uses of utils.py, which this run does not convert")


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize(
    "build",
    [
        "from utils import keep_on_cpu, to_device\nmodel = keep_on_cpu(Net())",
        "from utils import to_device\nmodel = to_device(Net(), 'cpu')",
        "from utils import to_device\nmodel = to_device(Net(), torch.device('cpu'))",
    ],
)
def test_helpers_that_keep_the_module_on_the_cpu_strand_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, build: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"utils.py": _UTILS, "nets.py": _NETS, "train.py": _TRAIN.format(build=build)}
    assert _findings(tmp_path, files, tuple(files), target) == {"utils.py": [], "nets.py": [], "train.py": []}
