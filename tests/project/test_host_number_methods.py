"""A method of the project's model class that returns ``.item()`` (``def get_step(self): return
self.step.data.item()``) gives the training loop a Python number: ``step = model.get_step()``,
then ``if step % 1000 == 0`` and ``k = step // 1000`` in an f-string read no device value (no
XLA702, XLA703 nor step closure), in the module that defines the class and in another module
that imports it (its summary's ``host_returns``), whether the instance is moved where it is built
or later.  A method that returns the tensor itself is still a device value: XLA703.  Executed:
the converted loop decides on the same numbers and trains as the original."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.executed import XLA_RUNNER, convert_folder, run_command, run_environment
from tests.support.projects import unfixed_findings, write_project

TARGETS = ["2.9", "sagemaker"]

MODELS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.step = nn.Parameter(torch.zeros(1).long(), requires_grad=False)

    def forward(self, x):
        self.step += 1
        return self.lin(x)

    def get_step(self):
        return self.step.data.item()

    def step_tensor(self):
        return self.step.data
"""
TRAIN = """\
import torch
from models import Net


def train(loader):
    device = torch.device("cuda")
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step = model.GETTER()
        k = step // 1000
        if step % 1000 == 0:
            torch.save(model.state_dict(), f"ck_{k}.pt")
"""
LATER = TRAIN.replace("model = Net().to(device)", "model = Net()\n    model.to(device)")


def _lazy(found: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(rule, line) for rule, line, _ in found if rule in ("XLA701", "XLA702", "XLA703")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("train", [TRAIN, LATER], ids=["moved-where-built", "moved-later"])
def test_a_method_returning_an_item_gives_a_number(tmp_path: Path, target: str, train: str) -> None:
    folder = write_project(tmp_path / "p", "p", {"models.py": MODELS, "train.py": train.replace("GETTER", "get_step")})
    found = unfixed_findings(folder, ["train.py", "models.py"], target)
    assert _lazy(found["train.py"]) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_method_returning_the_tensor_is_tested(tmp_path: Path, target: str) -> None:
    folder = write_project(
        tmp_path / "p", "p", {"models.py": MODELS, "train.py": TRAIN.replace("GETTER", "step_tensor")}
    )
    found = unfixed_findings(folder, ["train.py", "models.py"], target)
    assert ("XLA703", 17) in _lazy(found["train.py"])


@pytest.mark.parametrize("target", TARGETS)
def test_in_the_module_that_defines_it(tmp_path: Path, target: str) -> None:
    one = MODELS + "\n\n" + TRAIN.replace("import torch\nfrom models import Net\n", "").replace("GETTER", "get_step")
    folder = write_project(tmp_path / "p", "p", {"train.py": one})
    assert _lazy(unfixed_findings(folder, ["train.py"], target)["train.py"]) == []


RUNNABLE = """\
import torch
from models import Net


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 4), torch.randn(8, 4)) for _ in range(6)]
    for x, y in data:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step = model.get_step()
        k = step // 2
        if step % 2 == 0:
            print(f"checkpoint {k}")
        print(f"step {step} loss {loss.item():.6f} on {loss.device.type}")


if __name__ == "__main__":
    main()
"""


def _lines(output: str) -> list[tuple[str, ...]]:
    return [tuple(line.split()[:4]) for line in output.splitlines() if line.startswith(("step", "checkpoint"))]


def _losses(output: str) -> list[float]:
    return [float(line.split()[3]) for line in output.splitlines() if line.startswith("step")]


def _runs(folder: Path, models: str) -> tuple[str, str]:
    write_project(folder, "p", {"models.py": models, "train.py": RUNNABLE})
    eager = run_command([sys.executable, "train.py"], folder, run_environment())
    convert_folder(folder)
    assert "torch_xla" in (folder / "train.py").read_text()
    xla = run_command([sys.executable, str(XLA_RUNNER), "train.py"], folder, run_environment(PJRT_DEVICE="CPU"))
    return eager, xla


@pytest.mark.executed
def test_the_converted_loop_counts_steps_and_trains_as_the_original(tmp_path: Path) -> None:
    """Converted, the loop decides its checkpoints on the same Python numbers and its losses
    match the eager run's, on the XLA device."""
    eager, xla = _runs(tmp_path / "same", MODELS)
    assert [line[:2] for line in _lines(xla)] == [line[:2] for line in _lines(eager)]
    assert "on xla" in xla and _losses(xla) == pytest.approx(_losses(eager), rel=1e-3, abs=1e-5)
    assert len(_losses(xla)) == 6 and "checkpoint 3" in xla


@pytest.mark.executed
def test_the_comparison_sees_a_changed_step_count(tmp_path: Path) -> None:
    """The negative control: a model that counts two per forward gives other checkpoints, and
    the comparison above tells them apart."""
    eager, _ = _runs(tmp_path / "base", MODELS)
    _, xla = _runs(tmp_path / "other", MODELS.replace("self.step += 1", "self.step += 2"))
    assert [line[:2] for line in _lines(xla)] != [line[:2] for line in _lines(eager)]
