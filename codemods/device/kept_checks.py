"""Which checks of the device stay after the port and which it ports (the part of DeviceAnalysis,
analysis.py, that decides it once the walk is done): a check of the device the script picked
(``device.type == "cuda"``) becomes XLA's unless it guards code that fails without CUDA or times
with CUDA events, and a check (or an ``if torch.cuda.is_available():`` the port drops) whose code
reads a name that only a kept check's code binds stays with it (paired_guards.py finds the
pairs).  Kept apart from device_walk.py, which collects the candidates as the walk goes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device import paired_guards
from codemods.engine.walk import Analysis
from codemods.project.analysis import ProjectAnalysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts


class KeptChecks(Analysis):
    """The part of DeviceAnalysis that decides which device checks stay and which are ported."""

    part: DeviceFacts
    # What each device variable is assigned, anywhere in the file.
    device_assignments: dict[str, list[cst.BaseExpression]]
    device_code: set[cst.CSTNode]  # conditions around code worth running on XLA
    worth_running: set[cst.CSTNode]  # of those, around no device choice
    crash_code: dict[cst.CSTNode, cst.CSTNode]  # conditions around code that fails without CUDA
    availability_ifs: dict[cst.If, cst.FunctionDef | None]  # and the enclosing function
    # Checks of the device's type, with the device's name, the ``if`` and the enclosing function.
    type_check_candidates: list[tuple[cst.Comparison, str, cst.If, cst.FunctionDef | None]]

    if TYPE_CHECKING:

        def _on_the_xla_device(self, device: cst.BaseExpression | None) -> bool: ...

    def _type_checks(self) -> None:
        """The checks of the device the script picked that are ported, and those that stay: around
        code that fails without CUDA (reported), around a synchronize beside such code (timing with
        CUDA events: False on XLA, where the ``else`` times), or paired with a check that stays (its
        branch reads what only that check's branch binds)."""
        part = self.part
        module = self.walk.analysis(ProjectAnalysis).module
        candidates: list[paired_guards.GuardCandidate] = []
        kept: set[cst.BaseExpression] = set()
        ported: list[cst.Comparison] = []
        statements: dict[cst.Comparison, cst.If] = {}
        for comparison, device, statement, function in self.type_check_candidates:
            values = self.device_assignments.get(device, [])
            if not any(self._on_the_xla_device(value) for value in values):
                continue
            scope = function if function is not None else module
            if scope is not None:
                candidates.append(paired_guards.GuardCandidate(comparison, statement, scope))
            statements[comparison] = statement
            if statement not in self.device_code or self._times_with_cuda(statement):
                kept.add(comparison)
            elif statement in self.crash_code:
                kept.add(comparison)
                part.type_checks[comparison] = self.crash_code[statement]
                part.cuda_checks.discard(comparison)
            else:
                ported.append(comparison)
        paired = paired_guards.kept_with_partners(candidates, kept)
        for comparison in ported:
            statement = statements[comparison]
            if comparison in paired and statement in self.worth_running:
                continue  # a synchronize of the partner's timing: stays, with it
            part.type_checks[comparison] = None if comparison not in paired else paired[comparison][1]
            part.cuda_checks.discard(comparison)
            if comparison in paired:
                part.paired_checks[comparison] = paired[comparison][0]
        part.kept_type_checks = {check for check in (*kept, *paired) if isinstance(check, cst.Comparison)}

    def _paired_availability_ifs(self) -> None:
        """An ``if torch.cuda.is_available():`` the port drops (its code then always runs) whose
        code reads a name that only the code of a kept check binds (``end.record()`` after
        ``end = torch.cuda.Event(...)`` under a check that stays) stays too: a synchronize of
        that timing stays with it, and device code is reported (XLA104) instead."""
        part = self.part
        module = self.walk.analysis(ProjectAnalysis).module
        candidates: list[paired_guards.GuardCandidate] = []
        statements: dict[cst.BaseExpression, cst.If] = {}
        for statement, function in self.availability_ifs.items():
            test = statement.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test = test.expression
            scope = function if function is not None else module
            if part.is_available_call(test) and scope is not None:
                candidates.append(paired_guards.GuardCandidate(test, statement, scope))
                statements[test] = statement
        kept = {check for check, statement in statements.items() if statement not in part.ifs}
        if not kept or len(kept) == len(statements):
            return
        for check, (name, partner) in paired_guards.kept_with_partners(candidates, kept).items():
            statement = statements[check]
            part.ifs.discard(statement)
            if statement not in self.worth_running:
                part.blocked_ifs[statement] = self.crash_code.get(statements[partner], partner)
                part.paired_ifs[statement] = name

    def _times_with_cuda(self, statement: cst.If) -> bool:
        """Around a synchronize and code that fails without CUDA, and no device choice or move
        (CUDA-event timing): False on XLA, which skips the timing, is right there."""
        return statement in self.worth_running and statement in self.crash_code
