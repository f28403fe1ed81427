"""Third-party compiled CUDA ops (``apis.CUDA_KERNEL_MODULES``: BasicSR's ``FusedLeakyReLU``) and the
library layers built on them (``apis.CUDA_KERNEL_LAYERS``): a CUDA check around code that runs one
stays (XLA104: dropped, the code would run the op on the XLA device, which raises there), in this
file or through a callable of another module of the project whose code runs one (its summary's
``kernel_users``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods import apis
from codemods.engine.nodes import call_args, is_false
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.device.helper_moves import HelperCall
    from codemods.project.module_summary import Found


def kernel_callee(callee: str, call: cst.Call) -> bool:
    """The call runs a compiled CUDA op, or builds a layer that does."""
    if callee.startswith(apis.CUDA_KERNEL_MODULES):
        return True
    return callee in apis.CUDA_KERNEL_LAYERS and not _plain_conv_layer(callee, call)


def kernel_base(resolve: Callable[[cst.CSTNode], str | None], node: cst.ClassDef) -> str | None:
    """``class Generator(StyleGAN2Generator):``: the base whose ops its instances run."""
    for base in node.bases:
        qualified = resolve(base.value)
        if qualified is not None and (
            qualified.startswith(apis.CUDA_KERNEL_MODULES) or qualified in apis.CUDA_KERNEL_LAYERS
        ):
            return qualified
    return None


def project_kernel_calls(
    calls: Iterable[HelperCall],
    origin: Callable[[str], Found | None],
    part: DeviceFacts,
    crash_code: dict[cst.CSTNode, cst.CSTNode],
) -> None:
    """Calls under conditions of a callable of another module whose code runs such an op: the
    conditions around them guard code that fails on XLA."""
    for call in calls:
        if not (call.project and call.conds and call.node is not None):
            continue
        found = origin(call.name)
        op = found.summary.kernel_op(found.name) if found is not None and found.summary is not None else None
        if op is not None and found is not None and found.summary is not None:
            part.kernel_calls[call.node] = (op, found.summary.path)
            for cond in call.conds:
                crash_code.setdefault(cond, call.node)


def _plain_conv_layer(callee: str, call: cst.Call) -> bool:
    """``ConvLayer(c_in, c_out, k, activate=False)`` without ``downsample=True``: an EqualConv2d alone,
    torch operations."""
    if not callee.endswith(".ConvLayer"):
        return False
    positional, keywords = call_args(call)
    activate = keywords.get("activate")
    downsample = keywords.get("downsample")
    return (
        len(positional) <= 3
        and activate is not None
        and is_false(activate.value)
        and (downsample is None or is_false(downsample.value))
    )


class KernelOps(Analysis):
    """The part of DeviceAnalysis that finds the compiled CUDA ops its CUDA checks guard."""

    part: DeviceFacts
    crash_code: dict[cst.CSTNode, cst.CSTNode]  # conditions around code that fails without CUDA

    if TYPE_CHECKING:

        def mark_crash(self, node: cst.CSTNode) -> None: ...

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if (base := kernel_base(self.walk.resolve, node)) is not None:  # its instances run its ops
            self.part.kernel_users.setdefault(self.walk.scopes[0] if self.walk.scopes else node.name.value, base)

    def _kernel_call(self, callee: str | None, node: cst.Call) -> None:
        """A compiled CUDA op, or a layer built on one: the check around it stays (XLA104)."""
        if callee is not None and kernel_callee(callee, node):
            self.part.kernel_users.setdefault(self.walk.scopes[0] if self.walk.scopes else "", callee)
            if self.walk.conds:
                self.part.kernel_calls[node.func] = (callee, None)
                self.mark_crash(node.func)
