"""Device: CUDA devices, `.cuda()`, integer devices and availability checks become the
XLA device (XLA101-XLA107, XLA003).

Strings stay strings ("cuda" -> "xla"), so code that compares or prints them keeps
working; ``torch.device("cuda")`` becomes the target's device call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.device import tensor_checks
from codemods.device.facts import negated_check
from codemods.device.folded_ifs import fold_if
from codemods.device.rules.xla101_cuda_device import CUDA_DEVICE
from codemods.device.rules.xla102_dot_cuda import DOT_CUDA
from codemods.device.rules.xla103_integer_device import INTEGER_DEVICE
from codemods.device.rules.xla104_cuda_available_device import CUDA_AVAILABLE_DEVICE
from codemods.device.rules.xla105_cuda_check import CUDA_CHECK
from codemods.device.rules.xla106_set_device import SET_DEVICE
from codemods.device.rules.xla108_guarded_input_move import GUARDED_INPUT_MOVE
from codemods.device.rules.xla110_device_type_check import DEVICE_TYPE_CHECK
from codemods.engine.nodes import (
    as_expression,
    fold_true,
    is_cuda_device_string,
    string_value,
    walk,
)
from codemods.engine.rewriter import AssignmentT, Concern
from codemods.training.rules.xla203_optimizer_before_move import OPTIMIZER_BEFORE_MOVE

if TYPE_CHECKING:
    from codemods.facts import Facts

# What a device choice that stays as it is does on XLA, where the CUDA check is False.
_CPU_PATH = "the path without CUDA runs and the model and tensors stay on the CPU"


class DeviceRewrite(Concern):
    facts: Facts

    # -- calls ------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original in self.facts.training.optimizer_before_move:
            return self._move_before_optimizer(original, updated)
        if original in self.facts.device.index_of_tensor:
            return tensor_checks.tensor_device(self.ctx, original, updated)
        if original in self.facts.device.kept_availability_checks:
            self._cuda_check(original)
        return updated

    def _move_before_optimizer(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``model.parameters()`` -> ``model.to(device).parameters()``, and
        ``create_optimizer(model, ...)`` -> ``create_optimizer(model.to(device), ...)``:
        Module.to moves in place and returns the module, and a later move to the same
        device keeps the parameters, so the optimizer holds the ones that train."""
        early = self.facts.training.optimizer_before_move[original]
        built = (
            "the optimizer is built"
            if early.argument is None
            else f"`{self.ctx.code(original.func)}` collects the optimizer's parameters"
            if early.collects
            else f"`{self.ctx.code(original.func)}` builds an optimizer"
        )
        on_cpu = (
            f"`{early.model}`, handed in, may be on the CPU" if early.handed_in else f"`{early.model}` is on the CPU"
        )
        if not early.fixable:
            self.ctx.report(
                OPTIMIZER_BEFORE_MOVE,
                original,
                f"{built} while {on_cpu}, and {early.moved_by} moves the model later to a "
                "device that may be the CPU: moving a module to XLA replaces its parameters, so build the "
                "optimizer after the move",
            )
            return updated

        def moved(model: cst.BaseExpression) -> cst.BaseExpression | None:
            device = self.ctx.device()
            if device is None:
                return None
            return cst.Call(func=cst.Attribute(value=model, attr=cst.Name("to")), args=[cst.Arg(device)])

        def build() -> cst.Call | None:
            if early.argument is None:
                if not isinstance(updated.func, cst.Attribute) or (model := moved(updated.func.value)) is None:
                    return None
                return updated.with_changes(func=updated.func.with_changes(value=model))
            args = list(updated.args)
            positional = [i for i, a in enumerate(original.args) if a.keyword is None and not a.star]
            at = (
                next(
                    (
                        i
                        for i, a in enumerate(original.args)
                        if a.keyword is not None and a.keyword.value == early.argument
                    ),
                    None,
                )
                if isinstance(early.argument, str)
                else positional[early.argument]
            )
            if at is None or (model := moved(args[at].value)) is None:
                return None
            args[at] = args[at].with_changes(value=model)
            return updated.with_changes(args=args)

        return self.ctx.fix_or_keep(
            updated,
            OPTIMIZER_BEFORE_MOVE,
            original,
            f"{built} while {on_cpu} and {early.moved_by} moves the model later; moving a "
            "module to XLA replaces its parameters, so move it first: {new}",
            build,
        )

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

    # -- checks that stay -----------------------------------------------------------

    def _checked(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        if original in self.facts.device.type_checks:
            return self._type_check(original, updated)  # type: ignore[arg-type]  # type_checks holds Comparison nodes (the key is typed CSTNode)
        if original in self.facts.device.tensor_checks:
            blocker = self.facts.device.tensor_checks[original]  # type: ignore[index]  # tensor_checks holds Attribute and Comparison nodes (the key is typed CSTNode)
            return tensor_checks.ported_check(self.ctx, original, updated, blocker, self._devices_converted)  # type: ignore[arg-type]  # as above
        if original in self.facts.device.cuda_checks:
            self._cuda_check(original)
        return updated

    def _type_check(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        """``device.type == 'cuda'`` around device code, on the device the script picked:
        on XLA the question it asks ("is this the accelerator?") is ``== 'xla'``."""
        blocker = self.facts.device.type_checks[original]
        check = self.ctx.code(original)
        if blocker is not None or not self._devices_converted:
            why = (
                f"the code it guards also runs `{self.ctx.code(blocker)}`, which fails without CUDA"
                if blocker is not None
                else "the CUDA devices it picks stay (XLA101-XLA103 are off or suppressed)"
            )
            self.ctx.report(
                DEVICE_TYPE_CHECK,
                original,
                f"`{check}` asks whether the device is the accelerator, and is False on the XLA device, so the device "
                f"code it guards (model moves, wrappers) never runs there; not changed: {why}; compare with 'xla' "
                "once that code runs on XLA",
            )
            return updated
        return (
            self.ctx.fix(
                DEVICE_TYPE_CHECK,
                original,
                f"`{check}` asks whether the device the script picked is the accelerator, which is now the XLA "
                "device -> {new}",
                lambda: tensor_checks.compared_with(updated, self.ctx.target.device_string),
            )
            or updated
        )

    leave_Comparison = _checked
    leave_Attribute = _checked

    def _cuda_check(self, original: cst.CSTNode) -> None:
        negated = negated_check(original)
        unproven = self.facts.device.unproven_checks.get(original)  # type: ignore[call-overload]  # unproven_checks is keyed by Comparison; a CSTNode that is not one is just absent
        value = "True" if negated else "False"
        claim = (
            f"is {value} on the XLA device: check that"
            if unproven is None
            else f"is {value} on XLA only if `{unproven}` no longer names CUDA there, which this file does not show: "
            f"check what `{unproven}` holds, and that"
        )
        self.ctx.report(
            CUDA_CHECK,
            original,
            f"`{self.ctx.code(original)}` {claim} the code it guards "
            + ("is meant to run there" if negated else "is not needed there"),
        )

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
