"""CUDA runtime calls, CUDA mixed precision and multi-GPU APIs: one table lookup per
reference.  ``torch.cuda.synchronize()`` has an XLA equivalent and is rewritten
(XLA501); the rest are reported with advice (XLA202, XLA502-XLA506, XLA601)."""

from __future__ import annotations

import libcst as cst

from codemods import apis
from codemods.rewrite.base import Concern, Context
from codemods.syntax import string_value


class ReportedApis(Concern):
    """Reports every use of an API in ``table``."""

    def __init__(self, ctx: Context, table: dict[str, apis.SourceApi]) -> None:
        super().__init__(ctx)
        self.table = table

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        api = self.table.get(qualified)
        if api is not None:
            self.ctx.report(api.rule, original, f"`{self.ctx.code(original)}` {api.advice}")
        return updated


class CudaRuntimeRewrite(ReportedApis):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx, apis.CUDA_RUNTIME)

    def reference(self, original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
        """Table entries get their own advice; any other torch.cuda API the other rules
        do not handle is still reported, so no CUDA call is left unmentioned."""
        if qualified in self.table or not qualified.startswith("torch.cuda.") or qualified in apis.HANDLED_CUDA_APIS:
            return super().reference(original, updated, qualified)
        if not qualified.startswith(apis.HANDLED_CUDA_PREFIXES):
            self.ctx.report("XLA506", original, f"`{self.ctx.code(original)}` is CUDA-only; remove it or guard it")
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.resolve(original.func) != "torch.cuda.synchronize":
            return updated
        if original.args:
            self.ctx.report("XLA501", original, f"`{self.ctx.code(original)}`: use xm.wait_device_ops() (all devices)")
            return updated
        new = self.ctx.fix(
            "XLA501",
            original,
            f"{self.ctx.code(original)} -> {{new}}: waits for the device's pending work",
            lambda: self.ctx.replace_callee(original, updated, "wait_device_ops"),
        )
        return new if new is not None else updated

    def _pin_memory(self, key: str | None, value: cst.BaseExpression, original: cst.CSTNode) -> None:
        if key == "pin_memory" and isinstance(value, cst.Name) and value.value == "True":
            self.ctx.report("XLA502", original, "`pin_memory=True` has no effect on an XLA device; remove it")

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        self._pin_memory(original.keyword.value if original.keyword else None, original.value, original)
        return updated

    def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement) -> cst.DictElement:
        self._pin_memory(string_value(original.key), original.value, original)
        return updated
