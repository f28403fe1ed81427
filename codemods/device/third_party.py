"""What the device analysis knows of third-party libraries: those that name devices their own way
(CTranslate2), and compiled CUDA ops (CUDA_KERNEL_MODULES: BasicSR's ``FusedLeakyReLU``) with the
library layers built on them (CUDA_KERNEL_LAYERS): a CUDA check around code that runs one stays
(XLA104: dropped, the code would run the op on the XLA device, which raises there), in this file or
through a callable of another module of the project whose code runs one (its summary's
``kernel_users``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import call_args, is_false
from codemods.engine.walk import Analysis

if TYPE_CHECKING:
    from codemods.device.facts import DeviceFacts
    from codemods.device.helper_moves import HelperCall
    from codemods.project.module_summary import Found

# Libraries whose calls take a device of their own naming, with no XLA device among them
# (CTranslate2: "cpu", "cuda" or "auto"): a "cuda" handed to them is not a torch device to port.
OWN_DEVICE_LIBRARIES = ("ctranslate2.",)
# Modules of third-party packages whose ops call compiled C++/CUDA kernels that have no XLA kernel
# (XLA004 reports each use): code that runs one raises on XLA tensors, so a CUDA check around it
# stays (XLA104; on XLA that code is skipped, as on any host without CUDA).  BasicSR's basicsr/ops
# (fused_act, upfirdn2d, dcn) call their built extension for every tensor that is not on the CPU.
# mmcv.ops is not one: a few of its ops are written in torch operations (XLA004's table).
CUDA_KERNEL_MODULES = ("basicsr.ops.", "dcn_v2.", "warpctc_pytorch.")
# BasicSR's StyleGAN2 layers built on those ops (basicsr/archs/stylegan2_arch.py): the UpFirDn layers call
# upfirdn2d; StyleConv, ConvLayer (activate=True, its default, with a bias: FusedLeakyReLU; downsample:
# UpFirDnSmooth), ResBlock, ToRGB (upsample), the generator and the discriminator hold them.  EqualConv2d,
# ScaledLeakyReLU, ConstantInput and NormStyleCode are torch operations (and EqualLinear and
# ModulatedConv2d without their fused activation and resampling).
CUDA_KERNEL_LAYERS = frozenset(
    f"basicsr.archs.stylegan2_arch.{name}"
    for name in (
        "UpFirDnUpsample",
        "UpFirDnDownsample",
        "UpFirDnSmooth",
        "StyleConv",
        "ToRGB",
        "ConvLayer",
        "ResBlock",
        "StyleGAN2Generator",
        "StyleGAN2Discriminator",
    )
)


def kernel_callee(callee: str, call: cst.Call) -> bool:
    """The call runs a compiled CUDA op, or builds a layer that does."""
    if callee.startswith(CUDA_KERNEL_MODULES):
        return True
    return callee in CUDA_KERNEL_LAYERS and not _plain_conv_layer(callee, call)


def kernel_base(resolve: Callable[[cst.CSTNode], str | None], node: cst.ClassDef) -> str | None:
    """``class Generator(StyleGAN2Generator):``: the base whose ops its instances run."""
    for base in node.bases:
        qualified = resolve(base.value)
        if qualified is not None and (qualified.startswith(CUDA_KERNEL_MODULES) or qualified in CUDA_KERNEL_LAYERS):
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
