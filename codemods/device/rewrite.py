"""Device: CUDA devices, `.cuda()`, integer devices and availability checks become the
XLA device (XLA101-XLA107, XLA003).

Strings stay strings ("cuda" -> "xla"), so code that compares or prints them keeps
working; ``torch.device("cuda")`` becomes the target's device call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device.folded_ifs import fold_if
from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.rules.xla103_integer_device import INTEGER_DEVICE
from codemods.device.rules.xla104_cuda_available_device import CUDA_AVAILABLE_DEVICE
from codemods.device.rules.xla106_set_device import SET_DEVICE
from codemods.device.rules.xla108_guarded_input_move import GUARDED_INPUT_MOVE
from codemods.engine.nodes import (
    as_expression,
    fold_true,
    is_cuda_device_string,
    string_value,
    walk,
)
from codemods.engine.rewriter import AssignmentT, Concern

if TYPE_CHECKING:
    from codemods.facts import Facts

# What a device choice that stays as it is does on XLA, where the CUDA check is False.
_CPU_PATH = "the path without CUDA runs and the model and tensors stay on the CPU"


class DeviceRewrite(Concern):
    facts: Facts

    # -- availability -------------------------------------------------------------

    @property
    def _devices_converted(self) -> bool:
        """Dropping an availability check only helps when the CUDA devices it picks are
        converted too; otherwise it would force CUDA on a machine without it."""
        return all(self.ctx.selection.enabled(rule.code) for rule in (CUDA_DEVICE, DOT_CUDA, INTEGER_DEVICE))

    def _not_folded(self, original: cst.CSTNode) -> None:
        self.ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original,
            "the device is picked by an accelerator check, which is False on XLA; not changed "
            "because the CUDA device it picks stays (XLA101-XLA103 are off or suppressed here, or the tool does not "
            "see it used as a device in this file); make it the XLA device by hand",
        )

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        if original in self.facts.device.wrapped_checks:
            self._wrapped(original)
        if original not in self.facts.device.selections:
            return updated
        folded = fold_true(updated, self.facts.device.is_available_call)
        if not self._devices_converted or (not isinstance(folded, bool) and _still_cuda(folded)):
            self._not_folded(original)
            return updated

        def build() -> cst.BaseExpression | None:
            if isinstance(folded, cst.Integer):
                return self.ctx.device()
            if not isinstance(folded, bool) and string_value(folded) is not None:
                return folded if self.ctx.imports.require_package("torch_xla") else None
            return as_expression(folded)

        new = self.ctx.fix(
            CUDA_AVAILABLE_DEVICE,
            original,
            "a move to the host under an accelerator check, which is False on XLA: an XLA tensor needs it too "
            "(`.numpy()` raises on one), a CPU tensor is unchanged -> {new}"
            if original in self.facts.device.host_moves
            else "device picked by an accelerator check, which is False on XLA: the XLA device is always present -> {new}",
            build,
        )
        if new is None:
            return updated
        self.ctx.forget_fixes_inside(original)
        self.ctx.imports.discard(original)
        return new

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        return self._assignment(original, updated)

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        return self._assignment(original, updated)

    def _assignment(self, original: AssignmentT, updated: AssignmentT) -> AssignmentT:
        value, chosen = original.value, updated.value
        if value is None or chosen is None:  # `x: T` declares, chooses nothing
            return updated
        if value in self.facts.device.flag_values:
            flag, purpose = self.facts.device.flag_values[value]
            folded = fold_true(chosen, self.facts.device.is_available_call)
            if not isinstance(folded, bool) and _still_cuda(folded):
                return updated  # it would pick the CUDA device that stays (the choice's own finding says why)
            new_value = self.ctx.fix(
                CUDA_AVAILABLE_DEVICE,
                value,
                f"`{flag}` {purpose}: its accelerator check is dropped (False on XLA, where the XLA "
                "device is always present)",
                lambda: as_expression(fold_true(chosen, self.facts.device.is_available_call)),
            )
            if new_value is not None:
                self.ctx.imports.discard(value)
                return updated.with_changes(value=new_value)
        elif value in self.facts.device.blocked_flags:
            flag, blocker = self.facts.device.blocked_flags[value]
            self.ctx.report(
                CUDA_AVAILABLE_DEVICE,
                value,
                f"`{flag}` picks the device but also guards `{self.ctx.code(blocker)}`, which fails without "
                "CUDA: left as is, so the script runs on the CPU; move that code onto the XLA device by hand",
            )
        return updated

    def leave_If(
        self, original: cst.If, updated: cst.If
    ) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        if original in self.facts.training.input_guards:
            return self._input_guard(original, updated)
        if original in self.facts.device.gpu_requirements:
            return self._without_gpu_requirement(original, updated)
        if original in self.facts.device.blocked_ifs:
            self._blocked(original)
            return updated
        if original in self.facts.device.unset_fallbacks:
            self._unset_fallback(original)
            return updated
        if original in self.facts.device.wrapped_checks:
            self._wrapped(original)
            return updated
        if original not in self.facts.device.ifs:
            return self._without_set_device_guard(original, updated)
        if not self._devices_converted:
            self._not_folded(original.test)
            return updated
        folded = fold_true(updated.test, self.facts.device.is_available_call)
        parent = self.ctx.parent()
        is_elif = isinstance(parent, cst.If) and parent.orelse is original
        outcome = {
            True: "so the code under it always runs: check dropped",
            False: "so the code under it never runs: removed",
        }.get(folded, "dropped from the condition")  # type: ignore[arg-type]  # folded is True, False or an expression: dict.get returns the default for the expression
        new = self.ctx.fix(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{self.ctx.code(original.test)}`: the accelerator check holds for the XLA device, {outcome}",
            lambda: fold_if(updated, folded, is_elif, self.ctx.keep_lines_after),
        )
        if new is None:
            return updated
        self.ctx.imports.discard(original.test)
        gone = original.orelse if folded is True else original.body if folded is False else None
        if gone is not None:
            self.ctx.forget_removed(gone, updated.orelse if folded is True else updated.body)  # type: ignore[arg-type]  # gone is not None, so the updated If's matching branch (orelse when folded is True) is not None either
        if isinstance(new, cst.RemovalSentinel) and not is_elif:
            self.ctx.drop_statement(updated)  # keeps the block valid (pass) and its comments
            return updated
        return new

    def _wrapped(self, original: cst.If | cst.IfExp) -> None:
        call, wrapper, returned = self.facts.device.wrapped_checks[original]
        self.ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{self.ctx.code(call)}` picks the device, but `{wrapper}` returns `{self.ctx.code(returned)}`, which is "
            f"False on XLA (no CUDA): {_CPU_PATH}; make `{wrapper}` return True (the XLA device is always present), or pick `{self.ctx.target.api('device').spelled}()` here",
        )

    def _blocked(self, original: cst.If) -> None:
        blocker = self.facts.device.blocked_ifs[original]
        self.ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{self.ctx.code(original.test)}` picks the device, and the code it guards also runs "
            f"`{self.ctx.code(blocker)}`, which fails without CUDA: left as is, so on XLA (no CUDA) {_CPU_PATH}; "
            "move that code onto the XLA device by hand",
        )

    def _unset_fallback(self, original: cst.If) -> None:
        name = self.facts.device.unset_fallbacks[original]
        self.ctx.report(
            CUDA_AVAILABLE_DEVICE,
            original.test,
            f"`{self.ctx.code(original.test)}` guards the CPU fallback of `{name}`, which this file does not "
            "otherwise set (its default comes from another module or a config file): left as is, so on XLA (no "
            f"CUDA) the fallback runs and the model and tensors that go to `{name}` stay on the CPU (removing the "
            'check alone would leave the default it guards, which may be "cuda", to fail on an XLA host); make '
            f'sure `{name}` is "xla" where its default is set, then remove this check',
        )

    def _without_gpu_requirement(self, original: cst.If, updated: cst.If) -> cst.If:
        """``if not verify_min_gpu_count(): ...; sys.exit()``: the function checks for CUDA
        devices, which an XLA machine has none of, so the script would always end here."""
        name = self.facts.device.gpu_requirements[original]
        if not self._devices_converted:
            return updated
        self.ctx.forget_removed(original, updated)
        done = self.ctx.fix(
            CUDA_AVAILABLE_DEVICE,
            original,
            f"removed `if {self.ctx.code(original.test)}:` and the exit under it: `{name}` checks for CUDA devices "
            "(an accelerator check, False on XLA, and a CUDA device count, 0 there), so the script always ended "
            "here; on XLA the launcher starts one process per XLA device, however many there are (a minimum "
            "number of devices is no longer enforced)",
            lambda: original,
        )
        if done is not None:
            self.ctx.imports.discard(original)
            self.ctx.drop_statement(updated)
        return updated

    def _input_guard(
        self, original: cst.If, updated: cst.If
    ) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        """``if args.gpu is not None: images = images.cuda(args.gpu)``: without the index,
        DataParallel moved the inputs on CUDA; on XLA nothing else does."""
        test = self.ctx.code(original.test)
        if not self.facts.training.input_guards[original]:
            self.ctx.report(
                GUARDED_INPUT_MOVE,
                original.test,
                f"these moves run only `if {test}`; otherwise, on CUDA, DataParallel moved the inputs: on XLA they "
                "stay on the CPU unless the model does too; move them whenever the model is on the XLA device",
            )
            return updated
        parent = self.ctx.parent()
        is_elif = isinstance(parent, cst.If) and parent.orelse is original
        new = self.ctx.fix(
            GUARDED_INPUT_MOVE,
            original.test,
            f"`if {test}:` dropped: the model is on the XLA device on every path (DataParallel, which moved the "
            "inputs otherwise, is gone), so its inputs always move",
            lambda: fold_if(updated, True, is_elif, self.ctx.keep_lines_after),
        )
        if new is None:
            return updated
        self.ctx.imports.discard(original.test)
        return new

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
        if not drops:
            return updated
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

    def _only_set_device(self, statement: cst.BaseStatement) -> bool:
        return (
            isinstance(statement, cst.SimpleStatementLine)
            and not any(line.comment for line in statement.leading_lines)
            and statement.trailing_whitespace.comment is None
            and all(self._is_set_device(small) for small in statement.body)
        )


def _still_cuda(node: cst.CSTNode) -> bool:
    return any(is_cuda_device_string(n) for n in walk(node))
