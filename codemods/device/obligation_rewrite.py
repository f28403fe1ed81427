"""The device obligations' rewrites and reports: library device helpers become the target's
device (XLA113), comparisons with a value the port rewrote compare with the new value
(XLA114), and where a proof broke, the finding says so (XLA111, XLA112, XLA115, XLA116)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.rules.xla113_library_device_helper import LIBRARY_DEVICE
from codemods.device.rules.xla114_ported_condition import PORTED_CONDITION
from codemods.engine.nodes import quoted_like
from codemods.engine.rewriter import Concern

if TYPE_CHECKING:
    from codemods.facts import Facts


class ObligationRewrite(Concern):
    facts: Facts

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

    def _choices(
        self, original: cst.List | cst.Tuple | cst.Set, updated: cst.List | cst.Tuple | cst.Set
    ) -> cst.BaseExpression:
        asserted = self.facts.device_values.asserted_choices.get(original)
        if asserted is None:
            return updated
        assertion, value = asserted
        template = next(e.value for e in original.elements if isinstance(e.value, cst.SimpleString))

        def with_value() -> cst.List | cst.Tuple | cst.Set:
            elements = [*updated.elements]
            elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return updated.with_changes(elements=[*elements, cst.Element(quoted_like(template, value))])

        new = self.ctx.fix(
            PORTED_CONDITION,
            original,
            f"`{self.ctx.code(assertion.test)}` would fail: the device is {value!r} after the port -> {{new}}",
            with_value,
        )
        return new if new is not None else updated

    leave_List = leave_Tuple = leave_Set = _choices

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for node, (rule, message) in self.facts.obligations.broken.items():
            self.ctx.report(rule, node, self.ctx.target.advice(message))
        return updated
