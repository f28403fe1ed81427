"""Executed: XLA203's cases for a module moved through a holder's method or a loop
(codemods/training/rules/holder_move_cases.py), run as Accelerate projects on torch_xla 2.9 (CPU)
with accelerate.  A train-state holder whose ``to`` moves every module it holds through a loop over
``self.__dict__.items()`` (U-ViT's ``TrainState``) after the optimizer was built, and a trainer that
builds one optimizer per member of a model's ``unets`` in a loop, then moves the model to the
accelerator's device before ``accelerator.prepare`` (imagen-pytorch's ``ImagenTrainer``).  On XLA
each move makes new Parameter objects, and ``prepare`` maps the optimizer's parameters only from the
model's as it finds them (already moved): the optimizer steps CPU copies and the model never changes,
as XLA203 says (the negative control: the rule's invalid cases, with their findings).  The rule's
valid cases, the holder that moves its modules before the optimizer is built over them and the
trainer that leaves the move to ``prepare``, get no XLA203 and train on XLA."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.engine.rule import Expected, Invalid, RuleSelection, Valid
from codemods.runner import Job, run
from codemods.training.rules.holder_move_cases import holder_move_invalid, holder_move_valid
from tests.support.executed import convert_folder, run_script
from tests.support.projects import write_project

pytestmark = pytest.mark.executed

# The cases run: a holder (``utils.py``) and a trainer (``trainer.py``) each, by their notes.
MOVED_FIRST = {
    "utils.py": "holder-moves-its-modules-before-the-optimizer",
    "trainer.py": "accelerate-prepare-places-the-model-optimizers-over-members",
}
OPTIMIZER_FIRST = {
    "utils.py": "holder-moves-every-module-through-self-dict-items-after-the-optimizer",
    "trainer.py": "accelerate-trainer-moves-the-model-after-optimizers-over-its-members-before-prepare",
}

# Trains each case's model three steps through Accelerate and says whether its weights changed.
MAIN = """\
import torch
import torch.nn as nn
import torch_xla
from accelerate import Accelerator

import trainer
import utils


class Imagen(nn.Module):
    def __init__(self):
        super().__init__()
        self.unets = nn.ModuleList([nn.Linear(4, 1)])


def main():
    torch.manual_seed(0)
    accelerator = Accelerator()
    state = utils.initialize_train_state(accelerator.device)
    nnet, optimizer = accelerator.prepare(state.nnet, state.optimizer)
    before = nnet.weight.detach().cpu().clone()
    for step in range(3):
        optimizer.zero_grad()
        accelerator.backward(nnet(torch.randn(8, 4).to(accelerator.device)).pow(2).mean())
        optimizer.step()
        torch_xla.sync()
    changed = not torch.equal(before, nnet.weight.detach().cpu())
    print(f"holder {nnet.weight.device.type} changed {changed}")

    imagen_trainer = trainer.ImagenTrainer(Imagen())
    imagen_trainer.wrap_unet(0)
    unet = imagen_trainer.unet_being_trained
    before = unet.weight.detach().cpu().clone()
    for step in range(3):
        imagen_trainer.train_step(torch.randn(8, 4).to(accelerator.device))
        torch_xla.sync()
    changed = not torch.equal(before, unet.weight.detach().cpu())
    print(f"imagen {unet.weight.device.type} changed {changed}")


if __name__ == "__main__":
    main()
"""


def _cases(notes: dict[str, str]) -> dict[str, Valid | Invalid]:
    """The rule's case of each note, by the file it is written as."""
    both: tuple[Valid | Invalid, ...] = (*holder_move_valid(), *holder_move_invalid())
    cases = {case.note: case for case in both}
    return {name: cases[note] for name, note in notes.items()}


def _project(folder: Path, cases: dict[str, Valid | Invalid]) -> list[tuple[str, int, int, str]]:
    """The project of the cases' programs and MAIN, written and converted; its XLA203 findings
    (file, line, column, message)."""
    files = {name: case.before for name, case in cases.items()} | {"main.py": MAIN}
    write_project(folder, "holders", files)
    job = Job("check", "2.9", RuleSelection())
    reports = run([(str(folder / name), job) for name in files], workers=1)
    found = [(Path(r.path).name, f.line, f.col, f.message) for r in reports for f in r.findings if f.rule == "XLA203"]
    convert_folder(folder)
    return found


def _expected(cases: dict[str, Valid | Invalid]) -> list[tuple[str, Expected]]:
    return [(name, e) for name, case in cases.items() if isinstance(case, Invalid) for e in case.findings]


def test_optimizers_built_over_the_moved_modules_train_on_xla_with_no_xla203(tmp_path: Path) -> None:
    cases = _cases(MOVED_FIRST)
    assert not _expected(cases) and all(isinstance(case, Valid) for case in cases.values())
    assert _project(tmp_path / "moved_first", cases) == []
    output = run_script(tmp_path / "moved_first", "main.py").output
    assert "holder xla changed True" in output and "imagen xla changed True" in output, output


def test_a_move_after_the_optimizer_trains_nothing_prepare_or_not_as_xla203_says(tmp_path: Path) -> None:
    """The negative control: the holder's ``__dict__`` loop and the trainer's move before
    ``prepare`` leave each optimizer with the CPU parameters; the project run finds what the
    rule's cases expect, where they expect it."""
    cases = _cases(OPTIMIZER_FIRST)
    expected = _expected(cases)
    assert [name for name, _ in expected] == ["utils.py", "trainer.py"], expected
    found = _project(tmp_path / "optimizer_first", cases)
    assert [(name, line, col) for name, line, col, _ in found] == [(n, e.line, e.column) for n, e in expected], found
    for (_, _, _, message), (_, want) in zip(found, expected):
        assert message.startswith("the optimizer is built") and want.message in message, found
    assert "`val.to(device)` in `TrainState.to`" in found[0][3], found
    assert "Accelerate's `prepare` does not repair it" in found[1][3], found
    output = run_script(tmp_path / "optimizer_first", "main.py").output
    assert "holder xla changed False" in output and "imagen xla changed False" in output, output
