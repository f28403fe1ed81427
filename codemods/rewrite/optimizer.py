"""Optimizer: without mixed precision, ``optimizer.step()`` becomes
``xm.optimizer_step(optimizer)`` (XLA201), which all-reduces gradients across replicas
before stepping (a no-op with one device)."""

from __future__ import annotations

import libcst as cst

from codemods.rewrite.base import Concern
from codemods.syntax import call_args, dotted, method_name, receiver


class OptimizerRewrite(Concern):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = dotted(receiver(original))
        if method_name(original) != "step" or not self.facts.is_optimizer(name):
            return updated
        if self.facts.ddp:
            # DistributedDataParallel already all-reduces: the step stays plain.
            return updated
        positional, keywords = call_args(updated)
        closure = keywords.get("closure") or (positional[0] if len(positional) == 1 else None)
        if len(updated.args) > (1 if closure is not None else 0):
            self.ctx.report(
                "XLA201",
                original,
                f"`{self.ctx.code(original)}` has arguments other than a closure: "
                "call xm.optimizer_step(optimizer, optimizer_args={...}) by hand",
            )
            return updated

        def build() -> cst.Call | None:
            args = [cst.Arg(updated.func.value)]  # type: ignore[attr-defined]
            if closure is not None:
                closure_arg = cst.Dict([cst.DictElement(cst.SimpleString('"closure"'), closure.value)])
                args.append(cst.Arg(closure_arg, keyword=cst.Name("optimizer_args"), equal=_EQUAL))
            call = self.ctx.call("optimizer_step", [_spaced(a) for a in args[:-1]] + args[-1:])
            return call

        new = self.ctx.fix("XLA201", original, f"{self.ctx.code(original)} -> {{new}}", build)
        return new if new is not None else updated


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _spaced(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
