"""Settings with no effect on XLA that a person would simply delete (XLA502): statements
that only set or call one of runtime_apis.NO_EFFECT, ``pin_memory=True`` given to a torch
API, ``t.pin_memory()``; the other ``pin_memory=True`` are reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.cuda_only.rules.runtime_apis import NO_EFFECT
from codemods.cuda_only.rules.runtime_references import goes_with_device_call, only_sets_or_calls
from codemods.cuda_only.rules.xla502_cuda_no_effect import CUDA_NO_EFFECT
from codemods.engine.nodes import string_value
from codemods.engine.rewriter import Concern, Context, StatementLineT

if TYPE_CHECKING:
    from codemods.facts import Facts


class CudaRuntimeRewrite(Concern):
    """Removes the settings with no effect on XLA (XLA502) that a person would simply delete."""

    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        # Original small statements that only set or call a no-effect API: removed when
        # the statement line that holds them is left.
        self.no_effect: set[cst.BaseSmallStatement] = set()

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        """A statement that only sets or calls a no-effect API goes when its line is left."""
        if qualified in NO_EFFECT and not goes_with_device_call(self.ctx, original):
            statement = only_sets_or_calls(self.ctx, original)
            if statement is not None:
                self.no_effect.add(statement)
                self.ctx.track([statement])
        return updated

    def _without_no_effect(self, original: StatementLineT, updated: StatementLineT) -> StatementLineT:
        """The statement line minus its no-effect statements (all of them: the line goes,
        its comments move on; see Context.drop_statement)."""
        to_remove = [s for s in original.body if s in self.no_effect]
        if not to_remove:
            return updated
        removed = set()
        for statement in to_remove:
            done = self.ctx.fix(
                CUDA_NO_EFFECT,
                statement,
                f"removed `{self.ctx.code(statement).rstrip(';').rstrip()}`: no effect on an XLA device",
                lambda: statement,  # noqa: B023 - fix() calls it at once
            )
            if done is None:
                continue
            self.ctx.imports.discard(statement)
            removed.add(id(self.ctx.result_of(statement)))
        kept: list[cst.BaseSmallStatement] = [s for s in updated.body if id(s) not in removed]
        if len(kept) == len(updated.body):
            return updated
        if kept:
            return updated.with_changes(body=[*kept[:-1], kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        if isinstance(updated, cst.SimpleStatementSuite):
            return updated.with_changes(body=[cst.Pass()])
        self.ctx.drop_statement(updated)
        return updated

    leave_SimpleStatementLine = _without_no_effect
    leave_SimpleStatementSuite = _without_no_effect

    def _removable_pin_memory(self, call: cst.CSTNode | None, arg: cst.Arg) -> bool:
        """``pin_memory=True`` given to a torch API (DataLoader, tensor factories), whose
        keyword is optional: dropping it is safe.  Elsewhere (a dict, a function of the
        project that may require it) it is reported."""
        return (
            _is_pin_memory(arg.keyword.value if arg.keyword else None, arg.value)
            and isinstance(call, cst.Call)
            and (self.ctx.resolve(call.func) or "").startswith("torch.")
        )

    def _report_pin_memory(self, key: str | None, value: cst.BaseExpression, original: cst.CSTNode) -> None:
        if _is_pin_memory(key, value):
            self.ctx.report(CUDA_NO_EFFECT, original, "`pin_memory=True` has no effect on an XLA device; remove it")

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if not self._removable_pin_memory(self.ctx.parent(), original):
            self._report_pin_memory(original.keyword.value if original.keyword else None, original.value, original)
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        self._report_pin_memory(string_value(original.key), original.value, original)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original in self.facts.device.pin_memory_calls:
            return self._unpinned(original, updated)
        return self._without_pin_memory(original, updated)

    def _unpinned(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``t.pin_memory()`` -> ``t``: it raises without CUDA, and pinned memory only speeds
        up copies to a CUDA device."""
        if not isinstance(updated.func, cst.Attribute):
            return updated
        tensor = updated.func.value
        new = self.ctx.fix(
            CUDA_NO_EFFECT,
            original,
            f"removed `.pin_memory()` from `{self.ctx.code(original)}`: it raises without CUDA, and pinned memory "
            "only speeds up copies to a CUDA device",
            lambda: tensor,
        )
        if new is None:
            return updated
        self.ctx.imports.discard(original)
        return new

    def _without_pin_memory(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        at = next((i for i, arg in enumerate(original.args) if self._removable_pin_memory(original, arg)), None)
        if at is None:
            return updated
        if len(updated.args) != len(original.args):  # another rewrite reshaped the call
            self._report_pin_memory("pin_memory", original.args[at].value, original.args[at])
            return updated
        return self.ctx.fix_or_keep(
            updated,
            CUDA_NO_EFFECT,
            original.args[at],
            "removed `pin_memory=True`: no effect on an XLA device",
            lambda: updated.with_changes(args=_without_arg(list(updated.args), at)),
        )


def _without_arg(args: list[cst.Arg], at: int) -> list[cst.Arg]:
    """``args`` without the one at ``at``; when it was the last, the one before takes
    its comma (and with it the layout before the closing parenthesis)."""
    removed = args.pop(at)
    if at == len(args) and args:
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return args


def _is_pin_memory(key: str | None, value: cst.BaseExpression) -> bool:
    return key == "pin_memory" and isinstance(value, cst.Name) and value.value == "True"
