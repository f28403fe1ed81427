"""Mixed precision (XLA202, XLA204-XLA211): autocast and gradient scalers take the
target's spelling; under AMP, torch.optim SGD/Adam/AdamW become their sync-free
versions; values that choose the autocast device type or the precision at run time are
made to choose XLA and bfloat16.

For the 2.9 target autocast runs on the XLA device type in bfloat16 (the precision XLA
devices support; float16 requests become bfloat16).  The sagemaker target writes the
AWS guide's ``torch_xla.amp.autocast()``, which in torch_xla 1.13 is torch.cuda.amp.autocast
(enabled, dtype, cache_enabled: no device), and keeps the script's precision, as on the
GPUs of the SageMaker Training Compiler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.amp.facts import AutocastCall, ScalerCall
from codemods.amp.rules.xla202_autocast import AUTOCAST
from codemods.amp.rules.xla204_float16_autocast import FLOAT16_AUTOCAST
from codemods.amp.rules.xla205_grad_scaler import GRAD_SCALER
from codemods.amp.rules.xla206_syncfree_optimizer import SYNCFREE_OPTIMIZER
from codemods.amp.rules.xla207_amp_optimizer import AMP_OPTIMIZER
from codemods.amp.rules.xla208_scaler_not_needed import SCALER_NOT_NEEDED
from codemods.amp.rules.xla209_precision_choice import PRECISION_CHOICE
from codemods.amp.rules.xla210_autocast_device_type import AUTOCAST_DEVICE_TYPE
from codemods.amp.rules.xla211_custom_autograd_amp import CUSTOM_AUTOGRAD_AMP
from codemods.engine.nodes import dotted, fold_true, is_false, quoted_like, string_value, walk
from codemods.engine.rewriter import AssignmentT, Concern
from codemods.release_names.rules import XLA_RELEASE_NAMES
from codemods.targets import Api

if TYPE_CHECKING:
    from codemods.facts import Facts

_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_FLOAT16 = frozenset({"torch.float16", "torch.half"})
_BFLOAT16 = frozenset({"torch.bfloat16"})
_PRECISIONS = frozenset({"float16", "bfloat16", "half"})


class AmpRewrite(Concern):
    # -- autocast -------------------------------------------------------------------------

    facts: Facts

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        amp = self.facts.amp
        if original in amp.autocasts:
            return self._autocast(original, updated, amp.autocasts[original])
        if original in amp.unpacked_autocasts:
            self.ctx.report(
                AUTOCAST,
                original,
                f"`{self.ctx.code(original.func)}` gets unpacked arguments, so it is not rewritten: as CUDA autocast it "
                f"is off on XLA and the code under it runs in float32; call {self.ctx.target.xla_autocast} here (the "
                "unpacked keywords may hold CUDA's float16: XLA autocast takes bfloat16)",
            )
        if original in amp.scalers:
            return self._scaler(original, updated, amp.scalers[original])
        if original in amp.syncfree:
            return self._syncfree(original, updated)
        if original in amp.other_optimizers:
            # Where the scaler reads found_inf on the host whatever the optimizer (2.9), XLA208 says so.
            if self.ctx.target.scaler_skips_on_device:
                self.ctx.report(
                    AMP_OPTIMIZER,
                    original,
                    f"`{amp.other_optimizers[original]}` has no sync-free version: under the gradient scaler its step "
                    "reads found_inf on the host every iteration; prefer SGD, Adam or AdamW (torch_xla.amp.syncfree)",
                )
        elif self._custom_autograd_source(original.func, original) is not None:
            return self._custom_autograd(original.func, updated, original)
        return updated

    def _autocast(self, original: cst.Call, updated: cst.Call, call: AutocastCall) -> cst.BaseExpression:
        target = self.ctx.target
        by_device_type = target.autocast_takes == "device_type"
        wanted = "torch" if by_device_type else "torch_xla_1_13"
        if call.flavor == "xla" and call.spelling == wanted:
            return updated
        new_args = _updated_args(original, updated)
        device = call.device
        device_variable = call.flavor == "cuda" and call.spelling == "torch" and string_value(device) is None
        dtype_note = ""

        def keywords(skip: str) -> list[cst.Arg]:
            return [_as_keyword(new_args[id(arg)], name) for name, arg in call.arguments if name != skip]

        if call.through is not None and call.flavor == "cuda":
            return self._through_name(original, updated, call, new_args)
        if device_variable and by_device_type:
            return self._device_variable(original, updated, call, new_args)

        skip = "device" if call.spelling == "torch_xla" else "device_type"
        rest = keywords(skip)
        if by_device_type and (call.flavor == "cuda" or call.spelling == "torch_xla_1_13"):
            # torch_xla 1.13's autocast is CUDA autocast: float16 by default, like the CUDA ones.
            rest, dtype_note = self._bfloat16(call, rest)
        elif not by_device_type and call.flavor == "xla" and self.ctx.resolve(call.argument("dtype")) in _BFLOAT16:
            # torch 1.13's CUDA autocast raises "Current CUDA Device does not support bfloat16" before Ampere.
            dtype_note = (
                " (bfloat16 there needs an Ampere GPU, such as ml.p4d's; elsewhere use float16 with the scaler)"
            )
        rule = XLA_RELEASE_NAMES if call.flavor == "xla" else AUTOCAST
        release = f" (torch_xla {target.torch_xla_version})" if call.flavor == "xla" else ""

        def build() -> cst.Call | None:
            func = self.ctx.imports.expression(target.api("autocast"))
            if by_device_type:
                xla = quoted_like(
                    device if device is not None and string_value(device) else _DOUBLE, target.device_string
                )
                first = cst.Arg(xla) if self.ctx.imports.require_package("torch_xla") else None
            else:
                first = None
            if func is None or (by_device_type and first is None):
                return None
            self.ctx.imports.discard(original.func)
            if device is not None:
                self.ctx.imports.discard(device)
            return updated.with_changes(func=func, args=_argument_list([first, *rest] if first else rest, updated))

        # torch_xla.amp.autocast(device, ...) -> torch_xla.amp.autocast(...): the whole call says what changed.
        before = self.ctx.code(original if call.spelling == "torch_xla" and not by_device_type else original.func)
        return self.ctx.fix_or_keep(updated, rule, original, f"{before} -> {{new}}{release}{dtype_note}", build)

    def _device_variable(
        self, original: cst.Call, updated: cst.Call, call: AutocastCall, new_args: dict[int, cst.Arg]
    ) -> cst.Call:
        """The device type comes from a value that the device-type rule makes 'xla':
        only the precision may need to change."""
        device = call.device
        name = dotted(device)
        if name not in self.facts.amp.device_types.values() and name not in self.facts.amp.xla_device_types:
            self.ctx.report(
                AUTOCAST_DEVICE_TYPE,
                original,
                f"autocast's device type comes from `{self.ctx.code(device)}`: make sure it is "  # type: ignore[arg-type]  # assumes the call names its device (torch.autocast requires device_type): ``torch.autocast(**opts)`` gives no finding, so does not reach here
                f"'{self.ctx.target.device_string}' on the XLA device, or autocast is off there",
            )
        return self._fix_dtype(original, updated, call, new_args)

    def _through_name(
        self, original: cst.Call, updated: cst.Call, call: AutocastCall, new_args: dict[int, cst.Arg]
    ) -> cst.Call:
        """torch.autocast called through a name (``ac = torch.autocast``, or one branch of
        a choice): the name stays, so only its arguments can change; 2.9: a literal
        "cuda" becomes "xla" (and float16 bfloat16), torch_xla 1.13 has no "xla" device type."""
        target = self.ctx.target
        device = call.device
        name = call.through
        if target.autocast_takes != "device_type":
            self.ctx.report(
                AUTOCAST,
                original,
                f"`{name}` is torch.autocast, called here: the torch of torch_xla {target.torch_xla_version} "
                f"takes no 'xla' autocast device type, so it stays CUDA autocast (off on XLA); call "
                f"{target.xla_autocast} here instead",
            )
            return updated
        if string_value(device) is None:
            return self._device_variable(original, updated, call, new_args)
        dtype = call.argument("dtype")
        float16 = dtype is not None and self.ctx.resolve(dtype) in _FLOAT16
        precision = target.autocast_dtype

        def build() -> cst.Call | None:
            if not self.ctx.imports.require_package("torch_xla"):
                return None
            bfloat16 = self.ctx.imports.expression(Api("torch", precision)) if float16 else None  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; this path runs only when it takes one
            if float16 and bfloat16 is None:
                return None
            args = []
            for key, arg in call.arguments:
                new = new_args[id(arg)]
                if key == "device_type":
                    new = new.with_changes(value=quoted_like(arg.value, target.device_string))
                elif key == "dtype" and bfloat16 is not None:
                    self.ctx.imports.discard(arg.value)
                    new = new.with_changes(value=bfloat16)
                args.append(new)
            return updated.with_changes(args=args)

        note = f" (float16 becomes {precision}: XLA autocast runs in {precision})" if float16 else ""
        return self.ctx.fix_or_keep(
            updated,
            AUTOCAST,
            original,
            f"`{name}` is torch.autocast: {self.ctx.code(original)} -> {{new}}{note}",
            build,
        )

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        """CUDA autocast handed on uncalled: where it is called, it stays CUDA autocast."""
        if original not in self.facts.amp.autocast_references:
            return updated
        target = self.ctx.target
        instead = target.xla_autocast
        if qualified in apis.CUDA_AUTOCAST:
            why = "it has no device argument to change, so where it is called it stays CUDA autocast (off on XLA)"
        else:
            why = "its device type is given where it is called, out of sight, and with 'cuda' autocast is off on XLA"
        self.ctx.report(
            AUTOCAST,
            original,
            f"`{self.ctx.code(original)}` is handed on uncalled: {why}; call {instead} where it is used",
        )
        return updated

    def _bfloat16(self, call: AutocastCall, rest: list[cst.Arg]) -> tuple[list[cst.Arg], str]:
        """The keywords with the precision XLA autocast needs (float16 -> bfloat16)."""
        precision = self.ctx.target.autocast_dtype
        dtype = call.argument("dtype")
        qualified = self.ctx.resolve(dtype) if dtype is not None else None
        if dtype is not None and qualified not in _FLOAT16:
            return rest, ""
        value = self.ctx.imports.expression(Api("torch", precision))  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; _bfloat16 runs only when it takes one
        if value is None:
            return rest, ""
        if dtype is None:
            default = (
                " (float16, torch.cuda.amp.autocast's default,"
                if call.spelling in ("cuda_amp", "torch_xla_1_13")
                else " (float16, CUDA's default,"
            )
            note = f"{default} becomes {precision} on XLA)"
            return [cst.Arg(value, keyword=cst.Name("dtype"), equal=_EQUAL), *rest], note
        self.ctx.imports.discard(dtype)
        note = f" (float16 becomes {precision}: XLA autocast runs in {precision})"
        return [a.with_changes(value=value) if a.keyword and a.keyword.value == "dtype" else a for a in rest], note

    def _fix_dtype(
        self, original: cst.Call, updated: cst.Call, call: AutocastCall, new_args: dict[int, cst.Arg]
    ) -> cst.Call:
        dtype = call.argument("dtype")
        if dtype is None or self.ctx.resolve(dtype) not in _FLOAT16:
            return updated
        precision = self.ctx.target.autocast_dtype

        def build() -> cst.BaseExpression | None:
            return self.ctx.imports.expression(Api("torch", precision))  # type: ignore[arg-type]  # autocast_dtype is None only for a target whose autocast takes no device type; _fix_dtype runs only when it takes one

        new = self.ctx.fix(
            FLOAT16_AUTOCAST,
            dtype,
            f"autocast dtype {self.ctx.code(dtype)} -> {{new}}: XLA autocast runs in {precision}",
            build,
        )
        if new is None:
            return updated
        self.ctx.imports.discard(dtype)
        args = [
            new_args[id(arg)].with_changes(value=new) if name == "dtype" else new_args[id(arg)]
            for name, arg in call.arguments
        ]
        return updated.with_changes(args=args)

    # -- gradient scalers ------------------------------------------------------------------

    def _scaler(self, original: cst.Call, updated: cst.Call, scaler: ScalerCall) -> cst.BaseExpression:
        target = self.ctx.target
        by_device_type = target.autocast_takes == "device_type"
        self._scaler_cost(original, scaler)
        if scaler.spelling == "sharded":
            return self._sharded_scaler(original, updated, scaler)
        if scaler.flavor == "xla" and scaler.spelling == ("torch" if by_device_type else "torch_xla"):
            return updated
        new_args = _updated_args(original, updated)
        # torch_xla 1.13's scaler option (zeroed gradients instead of a skipped step, without
        # a host read): torch.amp.GradScaler has no such keyword and raises on it.
        dropped = [
            a
            for a in scaler.arguments
            if by_device_type
            and scaler.spelling == "torch_xla"
            and a.keyword is not None
            and a.keyword.value == "use_zero_grad"
        ]
        rest = [new_args[id(a)] for a in scaler.arguments if a not in dropped]
        if by_device_type:
            rest = [cst.Arg(quoted_like(scaler.device or _DOUBLE, target.device_string)), *rest]
        note = ""
        if (
            scaler.flavor == "cuda"
            and target.autocast_dtype is not None
            and original in self.facts.amp.precision_scalers
        ):
            note = f" (with {target.autocast_dtype} autocast it is not needed: its enabled= condition turns it off)"
        if dropped:
            note += (
                f" (without {self.ctx.code(dropped[0]).rstrip(',').strip()}: torch_xla 1.13's option, which "
                f"torch.amp.GradScaler does not take)"
            )
        rule = XLA_RELEASE_NAMES if scaler.flavor == "xla" else GRAD_SCALER
        release = f" (torch_xla {target.torch_xla_version})" if scaler.flavor == "xla" else ""

        def build() -> cst.Call | None:
            func = self.ctx.imports.expression(target.api("grad_scaler"))
            if func is None or (by_device_type and not self.ctx.imports.require_package("torch_xla")):
                return None
            self.ctx.imports.discard(original.func)
            for arg in dropped:
                self.ctx.forget_removed(arg, new_args[id(arg)])
            return updated.with_changes(func=func, args=_argument_list(rest, updated))

        return self.ctx.fix_or_keep(
            updated, rule, original, f"{self.ctx.code(original.func)} -> {{new}}{release}{note}", build
        )

    def _sharded_scaler(self, original: cst.Call, updated: cst.Call, scaler: ScalerCall) -> cst.BaseExpression:
        """torch's FSDP scaler takes the device first, like torch.amp.GradScaler, and runs on
        XLA tensors under the xla process group (torch_xla 2.9; checked at world size 1):
        it keeps its name and gets the XLA device.  torch_xla 1.13 has no such scaler."""
        target = self.ctx.target
        if not target.sharded_grad_scaler:
            self.ctx.report(
                GRAD_SCALER,
                original,
                f"`{self.ctx.code(original.func)}` shards with torch's FSDP: torch_xla {target.torch_xla_version} has "
                "no sharded gradient scaler; use torch_xla.amp.GradScaler and all-reduce found_inf over the processes, "
                "or train without loss scaling",
            )
            return updated
        if scaler.flavor == "xla":
            return updated
        new_args = _updated_args(original, updated)
        rest = [
            cst.Arg(quoted_like(scaler.device or _DOUBLE, target.device_string)),
            *(new_args[id(a)] for a in scaler.arguments),
        ]

        def build() -> cst.Call | None:
            if not self.ctx.imports.require_package("torch_xla"):
                return None
            if scaler.device is not None:
                self.ctx.imports.discard(scaler.device)
            return updated.with_changes(args=_argument_list(rest, updated))

        return self.ctx.fix_or_keep(
            updated,
            GRAD_SCALER,
            original,
            f"{self.ctx.code(original)} -> {{new}}: the FSDP scaler on the XLA device (found_inf agreed on over the "
            "xla process group)",
            build,
        )

    def _scaler_cost(self, original: cst.Call, scaler: ScalerCall) -> None:
        """A scaler that stays on under bfloat16 autocast costs a host read per step for
        nothing: reported before and after the conversion alike (same text), so lint on a
        converted file still says so."""
        target = self.ctx.target
        amp = self.facts.amp
        if target.autocast_dtype is None or original in amp.precision_scalers:
            return  # the sagemaker target keeps the script's float16, which needs the scaler
        enabled = next(
            (a.value for a in scaler.arguments if a.keyword is not None and a.keyword.value == "enabled"), None
        )
        if is_false(enabled) or (enabled is not None and _names_a_precision(enabled)):
            return
        if any(
            call.flavor == "xla"
            and call.spelling in ("torch", "torch_xla")
            and self.ctx.resolve(call.argument("dtype")) in _FLOAT16
            for call in amp.autocasts.values()
        ):
            return  # float16 autocast on XLA, kept by the script: it needs its scaler
        self.ctx.report(
            SCALER_NOT_NEEDED,
            original,
            f"with {target.autocast_dtype} autocast the gradient scaler is not needed, and its step reads found_inf on "
            f"the host every iteration (on torch_xla {target.torch_xla_version}, with the sync-free optimizers too: one "
            "more graph run and a transfer to the host per step): remove it, or pass enabled=False",
        )

    # -- optimizers --------------------------------------------------------------------------

    def _syncfree(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        optimizer = self.facts.amp.syncfree[original]
        if optimizer.unpacked:
            self.ctx.report(
                AMP_OPTIMIZER,
                original,
                f"`{self.ctx.code(original.func)}` gets unpacked keywords: the sync-free {optimizer.name} runs on XLA "
                "tensors, which take no fused/foreach/capturable kernels; make sure they are not set",
            )
        dropped = ", ".join(self.ctx.code(a).rstrip(",").strip() for a in optimizer.dropped)
        note = f" (without {dropped}: CUDA/CPU kernels)" if dropped else ""

        def build() -> cst.Call | None:
            func = self.ctx.imports.expression(self.ctx.target.api(f"syncfree_{optimizer.name}"))
            if func is None:
                return None
            self.ctx.imports.discard(original.func)
            new_args = _updated_args(original, updated)
            kept = [new_args[id(a)] for a in original.args if a not in optimizer.dropped]
            for arg in optimizer.dropped:
                self.ctx.forget_removed(arg, new_args[id(arg)])
            return updated.with_changes(func=func, args=_argument_list(kept, updated))

        if self.ctx.target.scaler_skips_on_device:
            what = "sync-free under the gradient scaler"
        else:
            what = (
                f"the AWS guide's AMP optimizer (on torch_xla {self.ctx.target.torch_xla_version} the gradient "
                "scaler still reads found_inf on the host at each step: it passes found_inf to no torch_xla optimizer)"
            )
        return self.ctx.fix_or_keep(
            updated,
            SYNCFREE_OPTIMIZER,
            original,
            f"{self.ctx.code(original.func)} -> {{new}}: {what}{note}",
            build,
            result=lambda call: call.func,
        )

    # -- custom autograd functions ----------------------------------------------------------------

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator) -> cst.Decorator:
        if isinstance(original.decorator, cst.Call) or self._custom_autograd_source(original.decorator, None) is None:
            return updated
        new = self._custom_autograd(original.decorator, updated.decorator, None)
        return updated.with_changes(decorator=new)

    def _custom_autograd_source(self, func: cst.BaseExpression, call: cst.Call | None) -> tuple[str, str, str] | None:
        """The decorator's concept (custom_fwd/custom_bwd), what it runs as ("cuda" or
        "xla") and its spelling ("cuda_amp", "torch_xla" for torch_xla 1.13's, "torch" for
        torch.amp's, whose device_type says which)."""
        qualified = self.ctx.resolve(func) or ""
        if qualified in apis.CUDA_CUSTOM_AUTOGRAD:
            return apis.CUDA_CUSTOM_AUTOGRAD[qualified], "cuda", "cuda_amp"
        if qualified in apis.XLA_CUSTOM_AUTOGRAD:
            return apis.XLA_CUSTOM_AUTOGRAD[qualified], "xla", "torch_xla"
        if qualified in apis.TORCH_CUSTOM_AUTOGRAD and call is not None:
            device_type = next(
                (a.value for a in call.args if a.keyword is not None and a.keyword.value == "device_type"), None
            )
            kind = string_value(device_type)
            if kind in ("cuda", "xla"):
                return apis.TORCH_CUSTOM_AUTOGRAD[qualified], kind, "torch"
        return None

    def _custom_autograd(
        self, func: cst.BaseExpression, updated: cst.BaseExpression, call: cst.Call | None
    ) -> cst.BaseExpression:
        """``torch.cuda.amp.custom_fwd`` -> ``torch.amp.custom_fwd(device_type="xla")`` (2.9),
        ``torch_xla.amp.custom_fwd`` (sagemaker: torch_xla 1.13's, which is CUDA's own, as its
        autocast is); and the XLA spelling of one release -> the other's."""
        concept, flavor, spelling = self._custom_autograd_source(func, call)  # type: ignore[misc]  # both callers (leave_Call, leave_Decorator) check _custom_autograd_source(...) is not None first
        target = self.ctx.target
        by_device_type = target.autocast_takes == "device_type"
        if flavor == "xla" and spelling == ("torch" if by_device_type else "torch_xla"):
            return updated

        def build() -> cst.BaseExpression | None:
            new_func = self.ctx.imports.expression(target.api(concept))
            if new_func is None or (by_device_type and not self.ctx.imports.require_package("torch_xla")):
                return None
            self.ctx.imports.discard(func)
            device_type = cst.Arg(
                quoted_like(_DOUBLE, target.device_string), keyword=cst.Name("device_type"), equal=_EQUAL
            )
            if isinstance(updated, cst.Call):
                kept = [a for a in updated.args if a.keyword is None or a.keyword.value != "device_type"]
                args = [device_type, *kept] if by_device_type else kept
                if not args:
                    return new_func
                return updated.with_changes(func=new_func, args=_argument_list(args, updated))
            return cst.Call(new_func, [device_type]) if by_device_type else new_func

        rule = XLA_RELEASE_NAMES if flavor == "xla" else CUSTOM_AUTOGRAD_AMP
        release = f" (torch_xla {target.torch_xla_version})" if flavor == "xla" else ""
        # Located in the output: the line after an inserted import maps there by diff only roughly.
        return self.ctx.fix_or_keep(
            updated, rule, func, f"{self.ctx.code(func)} -> {{new}}{release}", build, result=lambda node: node
        )

    # -- values chosen at run time --------------------------------------------------------------

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        return self._chosen_value(original, updated)

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        return self._chosen_value(original, updated)

    def _chosen_value(self, original: AssignmentT, updated: AssignmentT) -> AssignmentT:
        amp = self.facts.amp
        value, chosen = original.value, updated.value
        if value is None or chosen is None:  # `x: T` declares, chooses nothing
            return updated
        target = self.ctx.target
        if value in amp.device_types:
            name = amp.device_types[value]
            xla = target.device_string

            def device_type() -> cst.BaseExpression:
                folded = fold_true(chosen, self.facts.device.is_available_call)
                return _replace_strings(folded if not isinstance(folded, bool) else chosen, "cuda", xla)

            new = self.ctx.fix(
                AUTOCAST_DEVICE_TYPE,
                value,
                f"`{name}` chooses autocast's device type: {self.ctx.code(value)} -> {{new}} "
                f"(with 'cuda' it is off on the XLA device)",
                device_type,
            )
        elif value in amp.precision_choices and target.autocast_dtype is not None:
            name = amp.precision_choices[value]

            def precision() -> cst.BaseExpression:
                folded = fold_true(chosen, amp.is_precision_check)
                return cst.Name(str(folded)) if isinstance(folded, bool) else folded

            new = self.ctx.fix(
                PRECISION_CHOICE,
                value,
                f"`{name}` chooses the precision by CUDA checks (False on XLA): {{new}}, as XLA autocast "
                f"runs in {target.autocast_dtype}",
                precision,
            )
        else:
            return updated
        if new is None:
            return updated
        self.ctx.forget_removed(value, chosen)
        return updated.with_changes(value=new)


_DOUBLE = cst.SimpleString('""')


def _names_a_precision(value: cst.BaseExpression) -> bool:
    """``enabled=(dtype == 'float16')``, ``enabled=amp_dtype is torch.float16``: the scaler
    is on for one precision only."""
    nodes = walk(value)
    return any(type(n) is cst.Comparison for n in nodes) and any(
        string_value(n) in _PRECISIONS or (type(n) is cst.Attribute and n.attr.value in _PRECISIONS) for n in nodes
    )


def _updated_args(original: cst.Call, updated: cst.Call) -> dict[int, cst.Arg]:
    """The updated form of each original argument, by the original's id."""
    return {id(o): u for o, u in zip(original.args, updated.args)}


def _as_keyword(arg: cst.Arg, name: str) -> cst.Arg:
    return arg if arg.keyword is not None else arg.with_changes(keyword=cst.Name(name), equal=_EQUAL)


def _argument_list(args: Sequence[cst.Arg], like: cst.Call) -> list[cst.Arg]:
    """``args`` joined by commas; the list ends as ``like``'s did (a trailing comma or not)."""
    trailing = bool(like.args) and isinstance(like.args[-1].comma, cst.Comma)
    joined: list[cst.Arg] = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if not last and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif last and not trailing:
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        joined.append(arg)
    return joined


def _replace_strings(node: cst.BaseExpression, old: str, new: str) -> cst.BaseExpression:
    """``node`` with every string literal ``old`` replaced by ``new`` (same quotes)."""
    return node.visit(_StringReplacer(old, new))  # type: ignore[return-value]  # _StringReplacer never removes or flattens a node, so visit() returns the expression


class _StringReplacer(cst.CSTTransformer):
    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.SimpleString:
        return quoted_like(updated_node, self.new) if string_value(updated_node) == self.old else updated_node
