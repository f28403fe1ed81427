"""A method of the project's model class that returns ``.item()`` (``def get_step(self): return
self.step.data.item()``) gives the training loop a Python number: ``step = model.get_step()``,
then ``if step % 1000 == 0`` and ``k = step // 1000`` in an f-string read no device value (no
XLA702, XLA703 nor step closure), in the module that defines the class and in another module
that imports it (its summary's ``host_returns``), whether the instance is moved where it is built
or later.  A method that returns the tensor itself is still a device value: XLA703.  Executed:
the converted loop decides on the same numbers and trains as the original (same losses, on XLA),
with no new graph after the warm-up; the negative controls: a model that counts otherwise decides
otherwise, and without its barrier the converted loop compiles new graphs at every step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.executed import (
    STEADY_STEPS,
    WARMUP_STEPS,
    Executed,
    Run,
    converted_project,
    loss_problems,
    run_script,
    steady_problems,
    step_ends,
    training_problems,
)
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


# Enough steps to see a steady state after the warm-up.
STEPS = WARMUP_STEPS + STEADY_STEPS + 2

RUNNABLE = f"""\
import torch
from models import Net


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 4), torch.randn(8, 4)) for _ in range({STEPS})]
    for x, y in data:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step = model.get_step()
        k = step // 2
        if step % 2 == 0:
            print(f"checkpoint {{k}}")
        print(f"step {{step}} loss {{loss.item()}}")
    print(f"trained on {{loss.device.type}}")


if __name__ == "__main__":
    main()
"""

PORTED_STEP_END, UNBARRIERED_STEP_END = step_ends(" " * 8)
CASE = Executed("train.py")


def _decisions(run: Run) -> list[tuple[str, ...]]:
    """What the loop decided on its Python step numbers: each step's number and each checkpoint's."""
    return [tuple(line.split()[:2]) for line in run.output.splitlines() if line.startswith(("step", "checkpoint"))]


def _eager(folder: Path, models: str = MODELS) -> Run:
    return run_script(write_project(folder, "p", {"models.py": models, "train.py": RUNNABLE}), "train.py", on_xla=False)


def _converted(folder: Path, models: str = MODELS) -> Path:
    converted_project(folder, "p", {"models.py": models, "train.py": RUNNABLE})
    assert PORTED_STEP_END in (folder / "train.py").read_text()
    return folder


@pytest.mark.executed
def test_the_converted_loop_counts_steps_and_trains_as_the_original(tmp_path: Path) -> None:
    """Converted, the loop decides its checkpoints on the same Python numbers, its losses match
    the eager run's, on the XLA device, and it compiles no new graph after the warm-up."""
    eager = _eager(tmp_path / "eager")
    xla = run_script(_converted(tmp_path / "xla"), "train.py")
    assert _decisions(xla) == _decisions(eager)
    assert len(eager.losses) == STEPS and "checkpoint 5" in eager.output
    assert "trained on xla" in xla.output
    problems = training_problems(xla, eager, CASE)
    assert not problems, problems


@pytest.mark.executed
def test_the_comparison_sees_a_changed_step_count(tmp_path: Path) -> None:
    """The decisions' negative control: a model that counts two per forward gives other
    checkpoints, and the comparison above tells them apart."""
    eager = _eager(tmp_path / "eager")
    xla = run_script(_converted(tmp_path / "other", MODELS.replace("self.step += 1", "self.step += 2")), "train.py")
    assert _decisions(xla) != _decisions(eager)


@pytest.mark.executed
def test_without_the_barrier_each_step_compiles_new_graphs(tmp_path: Path) -> None:
    """The graph count's negative control: the converted loop with its barrier taken out trains
    like the original, but each step's `.item()` calls run graphs holding every step before
    them, and the steady-state check sees the new graphs."""
    eager = _eager(tmp_path / "eager")
    train = _converted(tmp_path / "no-barrier") / "train.py"
    train.write_text(train.read_text().replace(PORTED_STEP_END, UNBARRIERED_STEP_END))
    run = run_script(train.parent, "train.py")
    assert not loss_problems(run, eager)
    assert steady_problems(run, CASE)
