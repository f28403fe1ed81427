"""CUDA runtime calls, CUDA mixed precision and multi-GPU APIs: one table lookup per
reference.  ``torch.cuda.synchronize()`` has an XLA equivalent and is rewritten
(XLA501); settings with no effect on XLA are removed where a person would simply
delete them (XLA502); the rest are reported with advice (XLA202, XLA502-XLA506, XLA601)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.cuda_only import rules, source_apis
from codemods.cuda_only.rules.xla502_cuda_no_effect import CUDA_NO_EFFECT
from codemods.cuda_only.rules.xla506_cuda_api import CUDA_API
from codemods.cuda_only.rules.xla508_cuda_api_behind_switch import CUDA_API_BEHIND_SWITCH
from codemods.cuda_only.rules.xla511_cuda_answer_no_effect import CUDA_ANSWER_NO_EFFECT
from codemods.device.rules.xla105_cuda_check import CUDA_CHECK
from codemods.engine.nodes import string_value, walk
from codemods.engine.rewriter import Concern, Context, StatementLineT
from codemods.engine.rule_hooks import hooked_names

if TYPE_CHECKING:
    from codemods.cuda_only.facts import Answer
    from codemods.facts import Facts

# Expressions that may run code of their own: a statement holding one is not simply deleted.
_ACTIVE = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Subscript, cst.BaseComp)


class CudaRuntimeRewrite(Concern):
    """Reports every use of a CUDA runtime API (source_apis.CUDA_RUNTIME), with advice."""

    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        self.table = source_apis.CUDA_RUNTIME
        # Original small statements that only set or call a no-effect API: removed when
        # the statement line that holds them is left.
        self.no_effect: set[cst.BaseSmallStatement] = set()
        # By id: every visited Name and Attribute is looked up (CSTNode hashing is Python code).
        self.guarded = {id(node): switch for node, switch in self.facts.cuda_only.guarded_cuda.items()}
        # The APIs the rules' own hooks report (engine/hooks.py): not reported here as well.
        self.hooked = hooked_names(rules.RULES)

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        """Table entries get their own advice; any other torch.cuda API the other rules
        do not handle is still reported, so no CUDA call is left unmentioned."""
        replacing = self.facts.device.replaced_parts.get(original)
        if replacing is not None and self.ctx.enabled(replacing[1], replacing[0]):
            return updated  # inside a device call that becomes the XLA device, or a removed call: it goes with it
        api = self.table.get(qualified)
        if api is not None and api.rule is CUDA_NO_EFFECT:
            statement = self._only_sets_or_calls(original)
            if statement is not None:
                self.no_effect.add(statement)
                self.ctx.track([statement])
                return updated
        if api is not None and api.rule is CUDA_API and id(original) in self.guarded:
            self._guarded(original, api.advice)
            return updated
        answer = self.facts.cuda_only.cuda_answers.get(original)  # type: ignore[call-overload]  # a reference is an expression
        if answer is not None:
            self._answer(original, qualified, answer)
            return updated
        if qualified in self.hooked:
            return updated
        if api is not None:
            self.ctx.report(api.rule, original, f"`{self.ctx.code(original)}` {self.ctx.target.advice(api.advice)}")
            return updated
        if (
            not qualified.startswith("torch.cuda.")
            or qualified in apis.HANDLED_CUDA_APIS
            or qualified.startswith(apis.HANDLED_CUDA_PREFIXES)
        ):
            return updated
        if id(original) in self.guarded:
            self._guarded(original, "is CUDA-only")
        else:
            self.ctx.report(CUDA_API, original, f"`{self.ctx.code(original)}` is CUDA-only; remove it or guard it")
        return updated

    def _answer(self, original: cst.CSTNode, qualified: str, answer: Answer) -> None:
        """``torch.cuda.device_count()`` (0 on an XLA host) or ``is_bf16_supported()`` (False),
        by what the answer does where it goes (cuda_answers.py)."""
        counts = qualified == "torch.cuda.device_count"
        head = (
            f"`{self.ctx.code(original)}()` is {0 if counts else False} on an XLA host (no CUDA device): {answer.says}"
        )
        if answer.effect == "none":
            self.ctx.report(CUDA_ANSWER_NO_EFFECT, original, f"{head}; nothing changes on XLA")
        elif answer.effect == "branch":
            self.ctx.report(CUDA_CHECK, original, f"{head}: check that the code it chooses is right on XLA")
        elif counts:
            self.ctx.report(
                CUDA_API,
                original,
                f"{head}; count the XLA devices with {self.ctx.target.api('world_size').spelled}() (one device "
                "per process: 1)",
            )
        else:
            self.ctx.report(
                CUDA_API,
                original,
                f"{head}; XLA devices compute in bfloat16 (TPU): choose the precision without asking CUDA",
            )

    def _guarded(self, original: cst.CSTNode, advice: str) -> None:
        """A CUDA API under an ``if`` that is not true on XLA as the script runs by default:
        nothing to say under a kept CUDA availability check (the check itself is reported:
        XLA105); under a switch that is off by default, what happens when it is given."""
        switch = self.guarded[id(original)]
        if switch is not None:
            self.ctx.report(
                CUDA_API_BEHIND_SWITCH,
                original,
                f"`{self.ctx.code(original)}` runs only when `{switch}` is switched on (it is off by default): "
                f"it {self.ctx.target.advice(advice.removeprefix('is CUDA-only and '))}; with the switch on, the script "
                "fails on XLA",
            )

    # -- no-effect settings (XLA502) ----------------------------------------------------

    def _only_sets_or_calls(self, original: cst.CSTNode) -> cst.BaseSmallStatement | None:
        """The statement around ``original`` if all it does is set it (``cudnn.benchmark
        = True``, one target) or call it (``torch.cuda.empty_cache()``), with nothing
        else that could run code; deleting such a statement changes nothing on XLA."""
        chain = self.ctx.ancestors
        if len(chain) < 4 or chain[-1] is not original:
            return None
        inner, middle, statement = chain[-2], chain[-3], chain[-4]
        if isinstance(inner, cst.Call) and inner.func is original and isinstance(middle, cst.Expr):
            quiet = all(_passive(arg.value) for arg in inner.args)
        elif isinstance(inner, cst.AssignTarget) and isinstance(middle, cst.Assign) and len(middle.targets) == 1:
            quiet = _passive(middle.value)
        else:
            return None
        return middle if quiet and isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None

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


def _passive(expression: cst.CSTNode) -> bool:
    return not any(isinstance(node, _ACTIVE) for node in walk(expression))
