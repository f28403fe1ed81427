"""The device obligations' rewrites and reports: library device helpers become the target's
device (XLA113), comparisons with a value the port rewrote compare with the new value
(XLA114), and where a proof broke, the finding says so (XLA111, XLA112, XLA115, XLA116)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.device.rules.xla113_library_device_helper import LIBRARY_DEVICE
from codemods.device.rules.xla114_ported_condition import PORTED_CONDITION
from codemods.engine.nodes import parse_dotted, quoted_like, with_comma
from codemods.engine.rewriter import Concern
from codemods.training.rules.xla302_device_loader import DEVICE_LOADER

if TYPE_CHECKING:
    from codemods.facts import Facts


class ObligationRewrite(Concern):
    facts: Facts

    def _wrap_loader(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        """A loader handed to a function that feeds its batches unmoved to a model on the XLA
        device: a device loader where it is handed (obligations.py, ``_handed_loaders``)."""
        wrap = self.facts.obligations.loader_wraps[original]
        if wrap.sharded and "fsdp" not in self.ctx.target.apis:
            return updated  # the target does not port FSDP (reported there): the model stays off XLA

        def wrapped() -> cst.Call | None:
            to = parse_dotted(wrap.device) if wrap.device is not None else self.ctx.device()
            if to is None:
                return None
            return self.ctx.call("mp_device_loader", [with_comma(cst.Arg(updated)), cst.Arg(to)])

        new = self.ctx.fix(DEVICE_LOADER, original, wrap.message, wrapped)
        return new if new is not None else updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._wrap_loader(original, updated) if original in self.facts.obligations.loader_wraps else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return self._wrap_loader(original, updated) if original in self.facts.obligations.loader_wraps else updated

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
        obligations = self.facts.obligations
        sharded = obligations.broken_if_sharded.items() if "fsdp" in self.ctx.target.apis else ()
        for node, (rule, message) in (*obligations.broken.items(), *sharded):
            self.ctx.report(rule, node, self.ctx.target.advice(message))
        return updated
