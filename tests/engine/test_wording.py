"""What lint says of a fix: the message a rule writes once, as done, turned into what the
fix would do (codemods/engine/wording.py), for the shapes DEVELOPERS.md lists and for every
fix message of the rules' examples."""

from __future__ import annotations

import re

import pytest

from codemods.engine.wording import DONE_VERBS, would
from codemods.pipeline import convert_source
from tests.support.derived_cases import TARGET_CASES
from tests.support.rule_cases import CASES


@pytest.mark.parametrize(
    ("done", "planned"),
    [
        (
            "optimizer.step() -> xm.optimizer_step(optimizer)",
            "would replace optimizer.step() with xm.optimizer_step(optimizer)",
        ),
        (
            "torch.save -> xm.save: moves device tensors to the CPU",
            "would replace torch.save with xm.save: moves device tensors to the CPU",
        ),
        (
            "removed `pin_memory=True`: no effect on an XLA device",
            "would remove `pin_memory=True`: no effect on an XLA device",
        ),
        ("added `import torch_xla` for the rewritten code", "would add `import torch_xla` for the rewritten code"),
        (
            "`def _mp_fn(index): main()` added: the launchers call it",
            "would add `def _mp_fn(index): main()`: the launchers call it",
        ),
        (
            "device_ids removed from DDP(...): it wraps the model",
            "would remove device_ids from DDP(...): it wraps the model",
        ),
        (
            "host read `loss.item()` moved into a step closure: it runs later",
            "would move host read `loss.item()` into a step closure: it runs later",
        ),
        (
            "`use_cuda` picks the device: its check is dropped (False on XLA)",
            "`use_cuda` picks the device: its check would be dropped (False on XLA)",
        ),
        ("`c`: the code under it never runs: removed", "`c`: the code under it never runs: would be removed"),
        (
            "training loop: torch_xla.sync() ends every iteration",
            "would fix: training loop: torch_xla.sync() ends every iteration",
        ),
        # A sentence before the arrow is not a name of code: no "replace".
        (
            "`d == 'cuda'` asks whether it is the accelerator, which is XLA -> d == 'xla'",
            "would fix: `d == 'cuda'` asks whether it is the accelerator, which is XLA -> d == 'xla'",
        ),
        # Code spans are never reworded.
        ("`x.removed` -> `y`", "would replace `x.removed` with `y`"),
    ],
)
def test_shapes(done: str, planned: str) -> None:
    assert would(done) == planned


# A done verb outside code spans, the tense lint must never print.
_PAST = re.compile(rf"(?<!would be )\b({'|'.join(DONE_VERBS)})\b")


def _prose(message: str) -> str:
    return re.sub(r"`[^`]*`", "``", message)


def test_every_fix_message_of_the_rule_cases_reads_as_what_would_happen() -> None:
    """Each says "would ...", and no verb of the fix is left in the past tense where it
    says what the tool does (at the start, or ending the first clause)."""
    messages = {
        (finding.rule, finding.message)
        for case in CASES + TARGET_CASES
        if case.kind != "negative" and not case.run_level
        for finding in convert_source(case.before, target=case.target, filename=case.filename, locate="input").findings
        if finding.fixed
    }
    assert len(messages) > 300
    for rule, message in sorted(messages):
        planned = would(message)
        assert planned.startswith("would ") or " would be " in planned, (rule, message)
        head = _prose(planned).split(": ", 1)[0]
        assert not _PAST.search(head), (rule, planned)
