"""The device obligations' rewrites and reports: library device helpers become the target's
device (XLA113), comparisons with a value the port rewrote compare with the new value
(XLA114), and where a proof broke, the finding says so (XLA111, XLA112, XLA115, XLA116)."""

from __future__ import annotations

import libcst as cst

from codemods.device.rules import LIBRARY_DEVICE, PORTED_CONDITION
from codemods.engine.nodes import quoted_like
from codemods.engine.rewriter import Concern


class ObligationRewrite(Concern):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original not in self.facts.device_values.library_devices:
            return updated
        new = self.ctx.fix(LIBRARY_DEVICE, original, f"{self.ctx.code(original)} -> {{new}}", self.ctx.device)
        if new is not None:
            self.ctx.imports.discard(original.func)
        return new if new is not None else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        ported = self.facts.device_values.ported_comparisons.get(original)
        if ported is None:
            return updated
        comparison, value = ported
        new = self.ctx.fix(
            PORTED_CONDITION,
            original,
            f"`{comparison}`: {self.ctx.code(original)} -> {{new}}, the value the port gave it",
            lambda: quoted_like(original, value),
        )
        return new if new is not None else updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for node, (rule, message) in self.facts.obligations.broken.items():
            self.ctx.report(rule, node, message)
        return updated
