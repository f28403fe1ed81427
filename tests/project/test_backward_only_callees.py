"""A call of another project module's method that runs only a backward pass (mellotron's
``FP16_Optimizer.backward`` calling ``self.loss_scaler.backward(loss.float())``, whose
``LossScaler.backward`` is ``(loss * scale).backward()``) runs no optimizer step: it is no step
site of XLA306 ("which runs the optimizer step of ..."), with or without a ``__main__`` demo loop
in that module.  A call of a method that also steps an optimizer handed in (``self.opt.step()``)
keeps the error, on both targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import RuleSelection
from codemods.runner import Job, run
from tests.support.projects import write_project

SCALER = """\
import torch


class Scaler:
    def backward(self, loss):
        (loss * 2.0).backward()
"""

DEMO = """

if __name__ == "__main__":
    w = torch.randn(4, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    s = Scaler()
    for t in range(5):
        loss = (w * w).sum()
        opt.zero_grad()
        s.backward(loss)
        opt.step()
"""

STEPPER = """\
import torch


class Scaler:
    def __init__(self, opt):
        self.opt = opt

    def backward(self, loss):
        (loss * 2.0).backward()
        self.opt.step()
"""

WRAP = """\
IMPORT


class Wrapper:
    def __init__(self, opt):
        self.scaler = NAME(opt)

    def backward(self, loss):
        self.scaler.backward(loss.float())
"""


def _wrap(import_line: str = "from scaler import Scaler", name: str = "Scaler") -> str:
    return WRAP.replace("IMPORT", import_line).replace("NAME", name)


def _xla306(folder: Path, files: dict[str, str], target: str, mode: str = "check") -> dict[str, list[tuple[int, str]]]:
    write_project(folder, "proj", files)
    job = Job(mode, target, RuleSelection())  # type: ignore[arg-type]  # a literal mode
    reports = run([(str(folder / name), job) for name in files], workers=1)
    return {Path(r.path).name: [(f.line, f.message) for f in r.findings if f.rule == "XLA306"] for r in reports}


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
@pytest.mark.parametrize("scaler", [SCALER, SCALER + DEMO], ids=["plain", "main-demo"])
@pytest.mark.parametrize(
    ("import_line", "name"),
    [
        ("from scaler import Scaler", "Scaler"),
        ("from scaler import Scaler as S", "S"),
        ("import scaler", "scaler.Scaler"),
    ],
    ids=["import", "alias", "module-attribute"],
)
def test_a_call_that_runs_only_a_backward_pass_is_no_undriven_step(
    tmp_path: Path, target: str, scaler: str, import_line: str, name: str
) -> None:
    found = _xla306(tmp_path / "p", {"scaler.py": scaler, "wrap.py": _wrap(import_line, name)}, target)
    assert found["wrap.py"] == [], found


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_call_that_steps_an_optimizer_keeps_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)  # (the message names the module by its path from here)
    found = _xla306(tmp_path, {"scaler.py": STEPPER, "wrap.py": _wrap()}, target)
    ((line, message),) = found["wrap.py"]
    assert line == 9
    assert message.startswith(
        "`self.scaler.backward(loss.float())` in `Wrapper.backward`, which runs the optimizer step of "
        "`Scaler.backward` (scaler.py), has no step barrier"
    ), message
    barrier = "torch_xla.sync()" if target == "2.9" else "xm.mark_step()"
    # scaler.py is in the run, which may hold the calling script: convert it only if it is not
    assert message.endswith(
        "if the script whose loop calls it is not in this run, convert it with this file (the barrier goes "
        f"there); else call {barrier} after each call of `backward` in that loop"
    ), message


@pytest.mark.parametrize("target", ["2.9", "sagemaker"])
def test_a_second_conversion_changes_nothing(tmp_path: Path, target: str) -> None:
    files = {"scaler.py": SCALER + DEMO, "wrap.py": _wrap()}
    _xla306(tmp_path / "p", files, target, mode="write")
    folder = tmp_path / "p"
    job = Job("write", target, RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    assert not any(r.changed for r in reports), [r.diff for r in reports]
    assert (folder / "wrap.py").read_text() == _wrap()
