"""The cost of a gradient scaler under bfloat16 autocast (XLA208) is reported on a script
and again on its conversion: torch 2.9's GradScaler reads found_inf on the host at every
step, with torch_xla's sync-free optimizers too, so ``lint`` on the ported script must
still say so (it once went silent once the scaler was torch.amp.GradScaler("xla"))."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.amp.rules.xla208_scaler_not_needed import SCALER_NOT_NEEDED
from tests.support.fixtures import convert_fixture, output_bytes

SCALED_FIXTURES = (
    "amp_recipe.py",
    "amp_torch_autocast.py",
    "amp_gan.py",
    "amp_flag.py",
    "amp_class_trainer.py",
    "amp_decorated.py",
    "amp_dataparallel.py",
    "dist_amp_ddp.py",
    "legacy_xla_113_amp.py",
)


@pytest.mark.parametrize("script", SCALED_FIXTURES)
def test_scaler_cost_is_reported_before_and_after_the_conversion(script: str) -> None:
    once = convert_fixture(Path(script), "2.9")
    twice = convert_fixture(Path(script), "2.9", output_bytes(once))
    before = [(f.line, f.message) for f in once.findings if f.rule == SCALER_NOT_NEEDED.code]
    after = [(f.line, f.message) for f in twice.findings if f.rule == SCALER_NOT_NEEDED.code]
    assert before and after == before
    assert all("one more graph run and a transfer to the host per step" in message for _, message in after)


def test_no_scaler_cost_on_the_sagemaker_target() -> None:
    """torch_xla 1.13 keeps the script's float16, which needs its scaler."""
    conversion = convert_fixture(Path("amp_recipe.py"), "sagemaker")
    assert SCALER_NOT_NEEDED.code not in {f.rule for f in conversion.findings}
