"""Checkpoints: ``torch.save`` becomes ``xm.save`` (XLA401), which moves device tensors
to the CPU before pickling and writes once per host; saving a whole module is
reported (XLA402): its device tensors are pickled as they are."""

from __future__ import annotations

import libcst as cst

from codemods.rewrite.base import Concern
from codemods.syntax import arg_value, dotted


class CheckpointRewrite(Concern):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.resolve(original.func) != "torch.save":
            return updated
        saved = arg_value(original, 0, "obj")
        if dotted(saved) in self.facts.models:
            self.ctx.report(
                "XLA402",
                original,
                f"`{self.ctx.code(saved)}` is a whole module: save `{self.ctx.code(saved)}.state_dict()` "
                "so the checkpoint holds CPU tensors and loads without torch_xla",
            )
        new = self.ctx.fix(
            "XLA401",
            original,
            f"{self.ctx.code(original.func)} -> {{new}}: moves device tensors to the CPU before saving",
            lambda: self.ctx.replace_callee(original, updated, "save"),
            result=lambda call: call.func,
        )
        return new if new is not None else updated
