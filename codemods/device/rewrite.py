"""Device: the statements that go whole, ``torch.cuda.set_device(...)`` (XLA106) and
``assert torch.cuda.is_available()`` (XLA104), removed from their lines (the line is rebuilt
once, whichever of them it holds), and an ``if torch.cuda.is_available():`` around nothing but
set-device calls.  Every other device port is its rule's hooks (rules/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.rules.xla104_cuda_available_device import CUDA_AVAILABLE_DEVICE
from codemods.device.rules.xla106_set_device import SET_DEVICE
from codemods.engine.nodes import walk
from codemods.engine.rewriter import Concern

if TYPE_CHECKING:
    from codemods.facts import Facts


class DeviceRewrite(Concern):
    facts: Facts

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        device = self.facts.device
        if original in self.facts.training.input_guards or any(
            original in ifs
            for ifs in (
                device.gpu_requirements,
                device.blocked_ifs,
                device.unset_fallbacks,
                device.wrapped_checks,
                device.ifs,
            )
        ):
            return updated  # XLA104's or XLA108's
        return self._without_set_device_guard(original, updated)

    # -- torch.cuda.set_device ---------------------------------------------------------

    def _is_set_device(self, statement: cst.BaseSmallStatement) -> bool:
        return (
            type(statement) is cst.Expr
            and type(statement.value) is cst.Call
            and self.ctx.resolve(statement.value.func) in apis.SET_DEVICE_CALLS
        )

    def _dropped(self, statement: cst.BaseSmallStatement) -> bool:
        return self._is_set_device(statement) or statement in self.facts.device.cuda_asserts

    def _without_set_device(self, original, updated):  # type: ignore[no-untyped-def]  # overrides a leave hook whose libcst node types differ by caller
        drops = [s for s in original.body if self._dropped(s)]
        if not drops or (self.facts.imports.xla_optional and self._guarded_off_xla()):
            return updated  # (a file with its own non-XLA path: where the guard holds, the call is right)
        kept = [u for o, u in zip(original.body, updated.body) if not self._dropped(o)]
        for statement in drops:
            rule, why = (
                (CUDA_AVAILABLE_DEVICE, "the accelerator check is False on XLA, where the XLA device is always present")
                if statement in self.facts.device.cuda_asserts
                else (SET_DEVICE, "one XLA device per process")
            )
            done = self.ctx.fix(rule, statement, f"removed `{self.ctx.code(statement)}`: {why}", lambda: statement)  # noqa: B023 - fix() calls it at once
            if done is None:
                return updated
            self.ctx.imports.discard(statement)
        if kept:
            return updated.with_changes(body=[*kept[:-1], kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[cst.Pass()])
        self.ctx.drop_statement(updated)
        return updated

    leave_SimpleStatementLine = _without_set_device
    leave_SimpleStatementSuite = _without_set_device

    def _without_set_device_guard(self, original: cst.If, updated: cst.If) -> cst.If:
        """``if torch.cuda.is_available(): torch.cuda.set_device(rank)`` goes whole: a
        guard left around a bare ``pass`` says nothing."""
        body = original.body
        if (
            original.orelse is not None
            or not isinstance(body, cst.IndentedBlock)
            or body.header.comment is not None
            or any(line.comment for line in body.footer)
            or not all(self._only_set_device(statement) for statement in body.body)
            or not all(self.facts.device.is_available_call(n) for n in walk(original.test) if isinstance(n, cst.Call))
        ):
            return updated
        if self.facts.imports.xla_optional and self._never_on_xla(original.test):
            return updated  # its own non-XLA path, where it is right; on an XLA host it never runs
        self.ctx.forget_removed(original, updated)
        done = self.ctx.fix(
            SET_DEVICE,
            original,
            f"removed `if {self.ctx.code(original.test)}: {self.ctx.code(body.body[0].body[0])}`: one XLA device "  # type: ignore[attr-defined]  # body.body[0] is a SimpleStatementLine (_only_set_device checked every statement above)
            "per process",
            lambda: original,
        )
        if done is not None:
            self.ctx.drop_statement(updated)
        return updated

    def _guarded_off_xla(self) -> bool:
        """The statement being left is in the body of an ``if`` that is False on an XLA host."""
        ancestors = self.ctx.ancestors
        for index in range(len(ancestors) - 2, -1, -1):
            node = ancestors[index]
            if isinstance(node, cst.If):
                return ancestors[index + 1] is node.body and self._never_on_xla(node.test)
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                return False
        return False

    def _never_on_xla(self, test: cst.BaseExpression) -> bool:
        """A guard that is False on an XLA host: a CUDA availability check, or a CUDA check of
        the device the file picked (``device.type == "cuda"``, XLA105's)."""
        device = self.facts.device
        return device.is_available_call(test) or device.false_on_xla(test)

    def _only_set_device(self, statement: cst.BaseStatement) -> bool:
        return (
            isinstance(statement, cst.SimpleStatementLine)
            and not any(line.comment for line in statement.leading_lines)
            and statement.trailing_whitespace.comment is None
            and all(self._is_set_device(small) for small in statement.body)
        )
