"""Executed lazy-mode and Hugging Face cases: converted fixtures run on torch_xla 2.9
(CPU) and must reach a steady state, train like the originals, and print what they
printed.

Compiles are counted per step (tests/support/runners/xla_runner.py prints ``XLA_COMPILES``
after each ``step N loss V`` line).  Each case names its warm-up: the steps in which every
graph the script needs is compiled once (an optimizer's first step, a short last batch, an
evaluation pass), and how many of those steps may compile at all.  After the warm-up
not one new graph may be compiled, over at least MIN_STEADY_STEPS steps.  The language
model shows why both count: sliced on the device, each of its first epoch's 13 steps
compiles a graph and the second epoch reuses them; converted, 4 steps compile (the
first two, the short last batch, the first step after evaluation).

Hugging Face runs: the original runs with ``USE_TORCH_XLA=0`` (with torch_xla
installed, transformers and Accelerate would otherwise pick the XLA device even for
the eager run).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemods import RuleSelection, convert_source
from tests.support.executed import (
    LOSS_ATOL,
    LOSS_RTOL,
    XLA_RUNNER,
    Executed,
    Run,
    parse_run,
    run_command,
    run_eager,
    run_environment,
    run_xla,
)
from tests.support.paths import FIXTURES

pytestmark = pytest.mark.executed

MIN_STEADY_STEPS = 8
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass(frozen=True)
class LazyCase:
    script: str
    warmup: int  # steps (counted from the first) during which graphs may still be compiled
    compiling_steps: int = 3  # of which at most this many compile a graph
    huggingface: bool = False
    same_output: bool = False  # every printed line (not only the losses) matches the original's

    @property
    def id(self) -> str:
        return self.script


CASES = [
    # The corpus is device-resident and sliced per step: converted, it is sliced on the
    # host.  Warm-up: the first epoch (its short last batch) and the evaluation after it.
    LazyCase("lazy_word_language_model.py", warmup=14, compiling_steps=4),
    LazyCase("lazy_logging_forms.py", warmup=3, same_output=True),  # five logging forms in step closures
    LazyCase("lazy_accumulation.py", warmup=3, same_output=True),  # host accumulation next to closures
    LazyCase("lazy_short_last_batch.py", warmup=8, compiling_steps=4),
    # logs the loss, then adds to it in place: the closure gets a copy, and logs the base loss
    LazyCase("lazy_logged_before_in_place.py", warmup=3, same_output=True),  # the short batch compiles once
    # a helper's backward (handed the model) and its dict of floats, logged then given an item: left as is
    LazyCase("lazy_helper_logs_dict.py", warmup=3, same_output=True),
    LazyCase("hf_tokenizer_padding.py", warmup=3),  # padding=True -> "max_length"
    LazyCase("hf_trainer_code_args.py", warmup=3, huggingface=True),  # optim="adamw_torch_xla" in code
    LazyCase("hf_trainer_argparser.py", warmup=3, huggingface=True),  # optim set on the parsed arguments
]


def _runs(case: LazyCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Run, Run]:
    if case.huggingface:
        monkeypatch.setenv("USE_TORCH_XLA", "0")
    eager = run_eager(Executed(case.script), tmp_path)
    monkeypatch.delenv("USE_TORCH_XLA", raising=False)
    return eager, run_xla(Executed(case.script), tmp_path)


def assert_same_losses(xla: Run, eager: Run) -> None:
    assert len(xla.losses) == len(eager.losses) >= 8, xla.output
    for step, (got, want) in enumerate(zip(xla.losses, eager.losses)):
        assert abs(got - want) <= LOSS_ATOL + LOSS_RTOL * abs(want), f"step {step}: xla {got} vs eager {want}"


def assert_steady(run: Run, case: LazyCase) -> None:
    """Graphs are compiled by at most ``compiling_steps`` of the warm-up steps, and by
    none after them (over enough steps to tell)."""
    compiles = run.compiles
    assert compiles and compiles[0] >= 1, "did not run on XLA"
    assert len(compiles) - case.warmup >= MIN_STEADY_STEPS, compiles
    compiling = 1 + sum(later > earlier for earlier, later in zip(compiles, compiles[1:]))
    assert compiling <= case.compiling_steps, f"graphs compiled in {compiling} steps: {compiles}"
    assert compiles[-1] == compiles[case.warmup - 1], f"graphs compiled after warm-up: {compiles}"


def printed(run: Run) -> dict[str, list[str]]:
    """Printed lines grouped by their first word (a closure prints at the step barrier,
    so lines of different kinds may interleave differently; each kind keeps its order)."""
    groups: dict[str, list[str]] = {}
    for line in run.output.splitlines():
        if line.strip() and not line.startswith("XLA_"):
            groups.setdefault(line.split()[0], []).append(line)
    return groups


def assert_same_numbers(got: str, want: str) -> None:
    assert NUMBER.sub("#", got) == NUMBER.sub("#", want), (got, want)
    for a, b in zip(NUMBER.findall(got), NUMBER.findall(want)):
        assert abs(float(a) - float(b)) <= LOSS_ATOL + LOSS_RTOL * abs(float(b)), (got, want)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_converted_script_reaches_a_steady_state_and_trains_like_the_original(
    case: LazyCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eager, xla = _runs(case, tmp_path, monkeypatch)
    assert_same_losses(xla, eager)
    assert_steady(xla, case)
    if case.same_output:
        got, want = printed(xla), printed(eager)
        assert got.keys() == want.keys()
        for kind in want:
            assert len(got[kind]) == len(want[kind]), kind
            for line, original in zip(got[kind], want[kind]):
                assert_same_numbers(line, original)


def test_language_model_recompiles_every_step_unless_converted(tmp_path: Path) -> None:
    """Negative control: with only the device moved (the corpus still sliced on the
    device), every step of the first epoch compiles a new graph, and the check sees it."""

    run = run_xla(Executed("lazy_word_language_model.py"), tmp_path, RuleSelection(ignore=("XLA711",)))
    assert "return data.to(device)" in (run.folder / "lazy_word_language_model.py").read_text()
    with pytest.raises(AssertionError, match="graphs compiled in 1[3-9] steps"):
        assert_steady(run, CASES[0])


def test_masked_select_loss_recompiles_where_lint_says(tmp_path: Path) -> None:
    """XLA713 is reported, not fixed: the converted script still compiles a new graph for
    each new number of selected values, after any warm-up; the finding names the line."""
    run = run_xla(Executed("lazy_masked_select_loss.py"), tmp_path)
    with pytest.raises(AssertionError, match="graphs compiled"):
        assert_steady(run, LazyCase("lazy_masked_select_loss.py", warmup=3))
    source = (FIXTURES / "lazy_masked_select_loss.py").read_text()
    lines = {f.line for f in convert_source(source, locate="input").findings if f.rule == "XLA713"}
    assert {i + 1 for i, text in enumerate(source.splitlines()) if "[observed]" in text} == lines


def test_closure_given_the_tensor_changed_in_place_logs_the_total(tmp_path: Path) -> None:
    """Negative control: the converted script with the closure handed ``loss`` itself (no
    copy) logs the loss after ``loss += 0.5 * penalty``, the total, not the base loss the
    original printed; the comparison of printed lines sees it."""
    script = "lazy_logged_before_in_place.py"
    eager = run_eager(Executed(script), tmp_path)
    converted = run_xla(Executed(script), tmp_path)
    path = converted.folder / script
    text = path.read_text()
    assert "args=(step, loss.detach().clone(), penalty)" in text
    path.write_text(text.replace("loss.detach().clone()", "loss"))
    output = run_command(
        [sys.executable, str(XLA_RUNNER), script], converted.folder, run_environment(PJRT_DEVICE="CPU")
    )
    uncopied = parse_run(output, converted.folder)
    assert_same_losses(uncopied, eager)  # the steps are the same: only the logged value differs
    base, original = printed(uncopied)["base"], printed(eager)["base"]
    assert len(base) == len(original)
    with pytest.raises(AssertionError):
        for line, want in zip(base, original):
            assert_same_numbers(line, want)
    total = [float(line.split()[2]) for line in base]
    losses = eager.losses
    assert all(abs(got - want) <= LOSS_ATOL + LOSS_RTOL * abs(want) for got, want in zip(total, losses))


def test_dict_of_floats_copied_as_a_tensor_crashes(tmp_path: Path) -> None:
    """Negative control: the converted helper-driven loop with its dict of floats logged in a step
    closure as a tensor copy (``logs.detach().clone()``, what the port wrote when it took the
    helper's ``backward`` for a tensor's) raises AttributeError: the port leaves that line alone."""
    script = "lazy_helper_logs_dict.py"
    converted = run_xla(Executed(script), tmp_path)
    assert converted.losses, converted.output
    path = converted.folder / script
    text = path.read_text()
    line = '        print("logs", logs)\n'
    assert line in text and "add_step_closure" not in text
    closure = '        xm.add_step_closure(lambda logs: print("logs", logs), args=(logs.detach().clone(),))\n'
    path.write_text("import torch_xla.core.xla_model as xm\n" + text.replace(line, closure))
    result = subprocess.run(
        [sys.executable, str(XLA_RUNNER), script],
        cwd=converted.folder,
        env=run_environment(PJRT_DEVICE="CPU"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "AttributeError: 'dict' object has no attribute 'detach'" in result.stderr
