"""XLA403's loads in a branch that never runs on XLA: under a CUDA availability check the port keeps
(``if torch.cuda.is_available(): torch.load(p)``, XLA105 reports the check), which is False on an XLA
host, or in the ``else`` of its negation.  The code there never runs on XLA, so a load there gets no
map location and no finding (kospeech's checkpoint.py loads without one under the check and onto the
CPU in its ``else``).  A check the device rules consume (one that picks the device: XLA104 drops it,
and the code under it always runs) leaves its loads to the rule.  The node filters of XLA403's hooks
and their cases (xla403_load_map_location.py lists them; kept here, that module stays under the size
limit)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from codemods.engine.hooks import of_types
from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.facts import Facts


def live_loads(facts: Facts, loads: Collection[cst.Call]) -> list[cst.Call]:
    """Of ``loads``, those that may run on XLA."""
    kept = facts.device.kept_availability_checks
    return [load for load in loads if not facts.checkpoint.never_on_xla(load, kept)]


def live_locations(facts: Facts, locations: Collection[cst.BaseExpression], types: str) -> list[cst.BaseExpression]:
    """Of ``locations`` (map locations), those of ``types`` whose load may run on XLA."""
    kept, checkpoint = facts.device.kept_availability_checks, facts.checkpoint
    return [
        location
        for location in of_types(locations, types)
        if not checkpoint.never_on_xla(checkpoint.located_loads.get(location), kept)
    ]


def live_moves(facts: Facts) -> list[cst.BaseExpression]:
    """The pickled modules to move after their load (``module_moves``) whose load may run on XLA."""
    kept, checkpoint = facts.device.kept_availability_checks, facts.checkpoint
    return [value for value, (_, load) in checkpoint.module_moves.items() if not checkpoint.never_on_xla(load, kept)]


# kospeech's Checkpoint.load: the CUDA branch loads as saved, the else onto the CPU.
_KEPT_CHECK = """
import os
import torch{alias}


class Checkpoint:
    def load(self, path):
        if {check}:
            resume = {torch}.load(os.path.join(path, "trainer_states.pt"))
            model = {torch}.load(os.path.join(path, "model.pt"){location})
        else:
            resume = {torch}.load(os.path.join(path, "trainer_states.pt"), map_location=lambda storage, loc: storage)
            model = {torch}.load(os.path.join(path, "model.pt"), map_location=lambda storage, loc: storage)
        return resume, model
"""


def _kept_check(torch: str, check: str, location: str = "") -> str:
    return _KEPT_CHECK.format(
        alias=" as th" if torch == "th" else "", torch=torch, check=check.format(torch=torch), location=location
    )


def dead_branch_valid() -> tuple[Valid, ...]:
    return tuple(
        valid(_kept_check(torch, check, location), target=target, note=f"a-load-under-{note}-{target}-{torch}")
        for target in ("2.9", "sagemaker")
        for torch in ("torch", "th")
        for check, location, note in (
            ("{torch}.cuda.is_available()", "", "a-kept-availability-check"),
            ("{torch}.cuda.is_available() and path", "", "a-kept-check-and-another-test"),
            ("not (not {torch}.cuda.is_available() or path is None)", "", "a-negated-kept-check"),
        )
    )


_PICKED_DEVICE = """
import torch{alias}

if {torch}.cuda.is_available():
    device = {torch}.device("cuda")
    state = {torch}.load("a.pt")
else:
    device = {torch}.device("cpu")
    state = {torch}.load("a.pt", map_location="cpu")
model = {torch}.nn.Linear(2, 2).to(device)
model.load_state_dict(state)
"""

_PICKED_DEVICE_PORTED = """
import torch{alias}
import {module}

device = {device}
state = {torch}.load("a.pt", map_location="cpu")
model = {torch}.nn.Linear(2, 2).to(device)
model.load_state_dict(state)
"""


def dead_branch_invalid() -> tuple[Invalid, ...]:
    """A check that picks the device is dropped (XLA104): the load under it runs on XLA, and gets the
    map location; so does one under a test the kept check does not decide (``or``)."""
    return (
        *(
            invalid(
                _PICKED_DEVICE.format(alias=" as th" if torch == "th" else "", torch=torch),
                _PICKED_DEVICE_PORTED.format(
                    alias=" as th" if torch == "th" else "",
                    torch=torch,
                    module="torch_xla" if target == "2.9" else "torch_xla.core.xla_model as xm",
                    device="torch_xla.device()" if target == "2.9" else "xm.xla_device()",
                ),
                target=target,
                alias=torch == "th",
                note=f"a-load-under-a-check-that-picks-the-device-{target}-{torch}",
                findings=(Expected(5, 23 + len(torch), 'torch.load(...) -> map_location="cpu"'),),
            )
            for target in ("2.9", "sagemaker")
            for torch in ("torch", "th")
        ),
        *(
            invalid(
                _kept_check(torch, "{torch}.cuda.is_available() or path.endswith('.gpu')"),
                _kept_check(torch, "{torch}.cuda.is_available() or path.endswith('.gpu')").replace(
                    '.pt"))', '.pt"), map_location="cpu")'
                ),
                target=target,
                alias=torch == "th",
                note=f"a-load-under-a-kept-check-or-another-test-{target}-{torch}",
                findings=(
                    Expected(8, 69 + len(torch), 'torch.load(...) -> map_location="cpu"'),
                    Expected(9, 59 + len(torch), 'torch.load(...) -> map_location="cpu"'),
                ),
            )
            for target in ("2.9", "sagemaker")
            for torch in ("torch", "th")
        ),
    )
