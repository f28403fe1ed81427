"""Executed: XLA203's cases for ``accelerator.prepare`` of a model apart from the optimizers built
over its parameters (codemods/training/rules/split_optimizer_cases.py), run on torch_xla 2.9 (CPU)
with accelerate.  On XLA ``prepare`` moves the model (new Parameter objects) and re-points only the
optimizers of the same call at them: an optimizer prepared alone before the model, never prepared,
or held by a module that prepared it on its own steps the CPU copies, and the model's weights do
not change (the negative control, each reported as the rule's invalid cases say); prepared in the
same call, or built over the prepared model, it trains, with no XLA203 (the valid cases).  The
cases convert to themselves: each runs as written, with three training steps after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.rule import Invalid, Valid
from codemods.training.rules.split_optimizer_cases import split_optimizer_invalid, split_optimizer_valid
from tests.support.executed import run_script

pytestmark = pytest.mark.executed

# Three steps through Accelerate on what the case prepared; ``{stepped}`` is the optimizer stepped.
STEPS = """
import torch_xla

before = model.weight.detach().cpu().clone()
for _ in range(3):
    accelerator.backward(model(torch.ones(2, 4).to(accelerator.device)).pow(2).mean())
    {stepped}.step()
    {stepped}.zero_grad()
    torch_xla.sync()
print("weights", model.weight.device.type, "changed", not torch.equal(before, model.weight.detach().cpu()))
"""

STALE = {
    "accelerate-prepares-the-optimizer-alone-before-the-model": "optimizer",
    "accelerate-prepares-the-model-and-never-the-optimizer-built-before": "optimizer",
    "accelerate-prepares-the-model-with-a-module-holding-an-optimizer-it-prepared-alone": "optim.optimizer",
}
TRAINED = {
    "accelerate-prepares-the-model-and-its-optimizer-in-one-call": "optimizer",
    "accelerate-optimizer-built-over-the-prepared-model": "optimizer",
    "accelerate-optimizer-built-again-after-the-model-is-prepared": "optimizer",
}


def _case(note: str) -> Valid | Invalid:
    cases: tuple[Valid | Invalid, ...] = (*split_optimizer_valid(), *split_optimizer_invalid())
    return next(case for case in cases if case.note == note and case.target == "2.9")


def _run(folder: Path, case: Valid | Invalid, stepped: str) -> str:
    conversion = convert_source(case.before, target="2.9")
    assert conversion.output == case.before  # the case converts to itself
    found = [(f.line, f.col) for f in conversion.findings if f.rule == "XLA203"]
    want = [(e.line, e.column) for e in case.findings] if isinstance(case, Invalid) else []
    assert found == want, (found, want)
    folder.mkdir()
    (folder / "train.py").write_text(case.before + STEPS.format(stepped=stepped))
    return run_script(folder, "train.py").output


@pytest.mark.parametrize("note", sorted(TRAINED))
def test_an_optimizer_prepared_with_its_model_trains_on_xla_with_no_xla203(tmp_path: Path, note: str) -> None:
    output = _run(tmp_path / "case", _case(note), TRAINED[note])
    assert "weights xla changed True" in output, output


@pytest.mark.parametrize("note", sorted(STALE))
def test_an_optimizer_prepared_apart_from_its_model_trains_nothing_as_xla203_says(tmp_path: Path, note: str) -> None:
    """The negative control: the model is on XLA, its optimizer steps the CPU copies."""
    output = _run(tmp_path / "case", _case(note), STALE[note])
    assert "weights xla changed False" in output, output
