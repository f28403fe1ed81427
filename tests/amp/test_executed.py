"""Executed mixed-precision fixtures: converted for torch_xla 2.9 they train on CPU XLA
with bfloat16 autocast active and torch_xla.amp.syncfree optimizers (which torch 2.9's
GradScaler steps like torch.optim's, reading found_inf on the host), close to the original's float32
run (the original, without CUDA, runs its CUDA autocast disabled; its CUDA scaler stays enabled
where torch_xla is installed and scales the CPU loss: tests/amp/test_executed_cuda_scaler.py).

  * losses: bfloat16 keeps 8 bits of mantissa, so each step may differ from float32 by
    a few tenths of a percent and the difference compounds; AMP_RTOL (5%) allows that
    and still catches a step that did not happen (losses then stop falling) or a wrong
    loss; and the losses fall over the run, on XLA as in eager mode.
  * autocast was active on XLA: the runner records each autocast context entered, and a
    matmul of XLA tensors inside it gives bfloat16.
  * the optimizers that stepped are torch_xla.amp.syncfree's (where the script used SGD,
    Adam or AdamW), and the run reaches a steady state (no new graph after the warm-up).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codemods import RuleSelection
from tests.support.executed import Executed, Run, run_eager, run_xla, steady_problems

pytestmark = pytest.mark.executed

AMP_RTOL = 0.05
AUTOCAST_LINE = re.compile(r"^XLA_AUTOCAST (\S+) (\S+) (\S+)$", re.MULTILINE)
OPTIMIZER_LINE = re.compile(r"^XLA_OPTIMIZER (\S+)$", re.MULTILINE)

AMP_CASES = {
    "amp_recipe.py": {"syncfree.sgd.SGD"},
    "amp_torch_autocast.py": {"syncfree.adamw.AdamW"},
    "amp_flag.py": {"syncfree.adam.Adam"},
    "amp_class_trainer.py": {"syncfree.sgd.SGD"},
    "amp_gan.py": {"syncfree.adam.Adam"},
    "amp_nanogpt.py": {"syncfree.adamw.AdamW"},
    "amp_decorated.py": set(),  # RMSprop has no sync-free version (reported, kept)
    "main_pretrain.py": {"syncfree.adamw.AdamW"},  # AMP set up in util/misc.py
    "main.py": {"syncfree.adamw.AdamW"},  # a repository: loops in engine.py, scaler in utils/
    "amp_dataparallel.py": {"syncfree.adam.Adam"},  # AMP only on CUDA in the original: float32 in eager mode
}
# Fixtures that run epochs: (folder, arguments, training steps per epoch).  Their warm-up
# includes the first epoch, where what runs once per epoch (evaluation, the scheduler's
# first values) compiles its graphs.
EPOCHS = {
    "main_pretrain.py": ("mae_style", ("--epochs", "3"), 6),
    "main.py": ("vision_repo", ("--epochs", "3"), 6),
    "amp_dataparallel.py": (".", ("--epochs", "3"), 6),
}


def bfloat16_autocast_ran(run: Run) -> bool:
    """Some autocast context was entered, and every one ran XLA matmuls in bfloat16."""
    contexts = AUTOCAST_LINE.findall(run.output)
    return bool(contexts) and all(c == ("xla", "torch.bfloat16", "torch.bfloat16") for c in contexts)


def optimizers_stepped(run: Run) -> set[str]:
    return {name.removeprefix("torch_xla.amp.") for name in OPTIMIZER_LINE.findall(run.output)}


@pytest.mark.parametrize("script", sorted(AMP_CASES))
def test_converted_amp_fixture_trains_in_bfloat16(script: str, tmp_path: Path) -> None:
    folder, args, steps_per_epoch = EPOCHS.get(script, (".", (), None))
    case = Executed(script, folder=folder, args=args, steps_per_epoch=steps_per_epoch)
    eager = run_eager(case, tmp_path)
    xla = run_xla(case, tmp_path)

    assert len(eager.losses) >= 8, eager.output
    assert len(xla.losses) == len(eager.losses), xla.output
    for step, (got, want) in enumerate(zip(xla.losses, eager.losses)):
        assert abs(got - want) <= AMP_RTOL * abs(want), f"step {step}: xla {got} vs eager {want}"
    half = len(xla.losses) // 2
    assert sum(xla.losses[half:]) < sum(xla.losses[:half]), f"losses do not fall on XLA: {xla.losses}"

    assert bfloat16_autocast_ran(xla), f"no bfloat16 autocast on XLA: {AUTOCAST_LINE.findall(xla.output)}"
    stepped = optimizers_stepped(xla)
    assert AMP_CASES[script] <= stepped, f"sync-free optimizers {AMP_CASES[script]} did not step: {stepped}"
    assert not steady_problems(xla, case), steady_problems(xla, case)


def test_checks_catch_an_unported_autocast_and_optimizer(tmp_path: Path) -> None:
    """Negative control: converted without the autocast and sync-free rewrites, the
    script still runs on XLA, and the checks above see that neither happened."""
    run = run_xla(Executed("amp_recipe.py"), tmp_path, RuleSelection(ignore=("XLA202", "XLA206")))
    converted = (run.folder / "amp_recipe.py").read_text()
    assert "with autocast():" in converted and "torch.optim.SGD(" in converted
    assert run.losses and not bfloat16_autocast_ran(run)
    assert not AMP_CASES["amp_recipe.py"] <= optimizers_stepped(run)
