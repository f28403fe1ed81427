"""XLA512 compiled-extension-op: a forward that runs a compiled C++/CUDA extension's op
(``cpp_extension.load``, a relative import of a built module, a module a setup.py of the project builds
with ``CUDAExtension``/``CppExtension``), or raises unless its input is a
CUDA tensor, fails at the first training step on XLA.  Reported at the call or the test."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# Outside a forward: an extension's op handed a tensor its function makes on the GPU, and one
# handed only CPU tensors.
_HANDED_A_DEVICE_TENSOR = """
import torch
from torch.utils.cpp_extension import load

ops = load(name="box_ops", sources=["box_ops.cu"])


def box_iou(a, b):
    iou = torch.cuda.FloatTensor(a.shape[0], b.shape[0]).zero_()
    ops.box_iou_gpu(a, b, iou)
    return iou


def box_iou_cpu(a, b):
    iou = torch.zeros(a.shape[0], b.shape[0])
    ops.box_iou_cpu(a, b, iou)
    return iou
"""
_HANDED_A_DEVICE_TENSOR_PORTED = substituted(
    _HANDED_A_DEVICE_TENSOR,
    ("from torch.utils.cpp_extension import load\n", "from torch.utils.cpp_extension import load\nimport torch_xla\n"),
    (
        "torch.cuda.FloatTensor(a.shape[0], b.shape[0])",
        "torch.FloatTensor(a.shape[0], b.shape[0]).to(torch_xla.device())",
    ),
)
# An op that the file runs only on CUDA: the class is applied only under `x.is_cuda` (a torch
# fallback otherwise), and one whose build and use are under `torch.cuda.is_available()`.
_CUDA_DISPATCH = """
import torch
from torch.autograd import Function
from torch.utils.cpp_extension import load

_C = load("focal", sources=["focal.cpp", "focal_kernel.cu"])


class _FocalLoss(Function):
    @staticmethod
    def forward(ctx, logits, targets):
        return _C.focal_forward(logits, targets)


focal_loss_cuda = _FocalLoss.apply


def focal_loss_torch(logits, targets):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)


class FocalLoss(torch.nn.Module):
    def forward(self, logits, targets):
        if logits.is_cuda:
            loss = focal_loss_cuda
        else:
            loss = focal_loss_torch
        return loss(logits, targets)
"""
_BUILT_UNDER_AVAILABILITY = """
import torch
import torch.nn.functional as F
from torch.autograd import Function
from torch.utils.cpp_extension import load

if torch.cuda.is_available():
    fused = load("fused", sources=["fused.cpp", "fused_kernel.cu"])


class FusedActBackward(Function):
    @staticmethod
    def forward(ctx, grad, out):
        return fused.fused_bias_act(grad, out)


class FusedAct(Function):
    @staticmethod
    def forward(ctx, x, bias):
        return fused.fused_bias_act(x, bias)

    @staticmethod
    def backward(ctx, grad):
        return FusedActBackward.apply(grad, grad), None


def fused_act(x, bias, device="cpu"):
    if torch.cuda.is_available() and device != "cpu":
        return FusedAct.apply(x, bias)
    return F.leaky_relu(x + bias)
"""
_HANDED_ONLY_CPU_TENSORS = substituted(
    _HANDED_A_DEVICE_TENSOR,
    ("torch.cuda.FloatTensor(a.shape[0], b.shape[0]).zero_()", "torch.zeros(a.shape[0], b.shape[0])"),
)

COMPILED_EXTENSION_OP = Rule(
    code="XLA512",
    name="compiled-extension-op",
    severity="error",
    summary="A forward that runs a compiled C++/CUDA extension's op, or raises unless its input is a CUDA tensor",
    fixable=False,
    why="Ops of a compiled extension (built with torch.utils.cpp_extension: `load(...)`, `load_inline(...)`, "
    "or in place by the project's setup.py, imported as `from ._ext import ...`, a relative import that finds "
    "no Python module of the project (`from . import Name` where the package's `__init__.py` binds `Name`, a class "
    "it re-exports, is a Python name: no extension), or named in a `CUDAExtension(name=...)`/`CppExtension(name=...)` of a "
    "setup.py of the project and imported by that name, `import pointnet2._ext as _ext`) read their tensors' memory through CUDA (or the CPU): they raise on XLA "
    "tensors, and so does a forward that starts with `if not x.is_cuda: raise ...`, which an XLA tensor never "
    "passes. Any model whose forward runs one fails at its first training step on XLA. A module that binds an "
    "extension's op to one of its names (`nms = _C.nms`, `nms = amp.float_function(_C.nms)`) hands it out as a "
    "function that the model's code calls with its tensors: reported at the binding. The tool cannot port "
    "the op: write it in torch operations (which XLA compiles), or keep the layer out of the model trained on "
    "XLA. Outside a forward, a call of such an op that hands it a tensor its function puts on the device "
    "(`iou = torch.cuda.FloatTensor(n, m)`, `x.cuda()`; on the XLA device after the port) raises at every call, "
    "and is reported too. An op in a class that the file reaches only under a test never true on XLA (every use of "
    "the class, or of a module-level alias of it, `op_cuda = _Loss.apply`, under `if torch.cuda.is_available() "
    "and device != 'cpu':` or `if logits.is_cuda:`, with a torch fallback in the other branch), and that no other "
    "file of the project names, never runs there and is not reported. A single file whose folder is not known cannot tell an extension from a module it could not read: "
    "run the tool on the project for this check.",
    examples=lambda: (
        invalid(
            """
            import torch
            from torch.utils.cpp_extension import load

            fused = load(name="fused_bias_act", sources=["fused_bias_act.cpp", "fused_bias_act_kernel.cu"])


            class FusedBiasAct(torch.nn.Module):
                def forward(self, x, bias):
                    return fused.fused_bias_act(x, bias, 0.2)
            """,
            findings=(
                Expected(
                    9,
                    16,
                    "`fused.fused_bias_act(...)` runs an op of a compiled extension (`load(...)`, a C++/CUDA "
                    "extension compiled at run time), which raises on XLA tensors",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(_HANDED_ONLY_CPU_TENSORS, note="an extension's op outside a forward, handed only CPU tensors"),
        valid(_CUDA_DISPATCH, note="an op whose class the file applies only to CUDA tensors (`if logits.is_cuda:`)"),
        valid(
            _CUDA_DISPATCH,
            target="sagemaker",
            note="an op whose class the file applies only to CUDA tensors (sagemaker)",
        ),
        valid(
            _BUILT_UNDER_AVAILABILITY,
            note="an op built and applied only under `torch.cuda.is_available()` (a torch fallback on XLA)",
        ),
        valid(
            substituted(
                _BUILT_UNDER_AVAILABILITY, ("import load\n", "import load as build\n"), ("= load(", "= build(")
            ),
            target="sagemaker",
            note="an op built and applied only under `torch.cuda.is_available()` (sagemaker, alias)",
        ),
        valid(
            """
            import torch
            from torch.utils.cpp_extension import load

            ops = load(name="ops", sources=["ops.cpp"])
            ops.warm_up()
            """,
            note="an extension op outside any forward (not on a training step's path)",
        ),
        valid(
            """
            import torch
            import torchvision
            from torch.utils.cpp_extension import load

            ops = load(name="ops", sources=["ops.cpp"])
            nms = torchvision.ops.nms
            version = ops.version()


            class Boxes:
                kernel = ops.nms
            """,
            note="a module-level name bound to no extension op, or an op bound in a class body",
        ),
        valid(
            """
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    if not x.is_cuda:
                        x = x.float()
                    return x
            """,
            note="a CUDA test in a forward that does not raise (XLA105)",
        ),
    ),
    invalid=lambda: (
        invalid(
            substituted(_CUDA_DISPATCH, ("            loss = focal_loss_torch", "            loss = _FocalLoss.apply")),
            note="an op whose class the file also applies to tensors that are not CUDA ones",
            findings=(Expected(11, 16, "`_C.focal_forward(...)` runs an op of a compiled extension"),),
        ),
        invalid(
            substituted(
                _BUILT_UNDER_AVAILABILITY, ("    return F.leaky_relu(x + bias)", "    return FusedAct.apply(x, bias)")
            ),
            target="sagemaker",
            note="an op built under `torch.cuda.is_available()` but applied without it (sagemaker)",
            findings=(
                Expected(13, 16, "`fused.fused_bias_act(...)` runs an op of a compiled extension (`load(...)`"),
                Expected(19, 16, "`fused.fused_bias_act(...)` runs an op of a compiled extension (`load(...)`"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.utils.cpp_extension import load

            _C = load(name="box_ops", sources=["nms.cpp", "nms_kernel.cu"])
            nms = _C.nms
            """,
            note="an extension's op bound to a name of the module",
            findings=(
                Expected(
                    5,
                    7,
                    "`_C.nms` is an op of a compiled extension (`load(...)`, a C++/CUDA extension compiled at run "
                    "time), which this module hands out as `nms`: compiled CPU/CUDA kernels have no XLA "
                    "implementation, so each call of `nms` with XLA tensors raises",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch.utils.cpp_extension as cpp

            from .amp import float_function

            ops = cpp.load(name="box_ops", sources=["nms.cpp"])
            box_nms = float_function(ops.nms)
            """,
            target="sagemaker",
            alias=True,
            note="an extension's op handed to a wrapper and bound to a name of the module (sagemaker)",
            findings=(Expected(7, 26, "which this module hands out as `box_nms`"),),
        ),
        invalid(
            _HANDED_A_DEVICE_TENSOR,
            _HANDED_A_DEVICE_TENSOR_PORTED,
            note="an extension's op outside a forward, handed a tensor its function makes on the GPU",
            findings=(
                Expected(
                    10,
                    5,
                    "`ops.box_iou_gpu(...)` runs an op of a compiled extension (`load(...)`, a C++/CUDA extension "
                    "compiled at run time) on `iou`, which the port puts on the XLA device: the op raises on XLA "
                    "tensors, at every call",
                ),
            ),
        ),
        invalid(
            substituted(_HANDED_A_DEVICE_TENSOR, ("import load\n", "import load as build\n"), ("= load(", "= build(")),
            substituted(
                _HANDED_A_DEVICE_TENSOR_PORTED,
                ("import load\n", "import load as build\n"),
                ("= load(", "= build("),
                ("import torch_xla\n", "import torch_xla.core.xla_model as xm\n"),
                ("torch_xla.device()", "xm.xla_device()"),
            ),
            target="sagemaker",
            alias=True,
            note="an extension's op outside a forward, handed a tensor its function makes on the GPU (sagemaker)",
            findings=(Expected(10, 5, "on `iou`, which the port puts on the XLA device"),),
        ),
        invalid(
            """
            import torch
            from torch.autograd import Function


            class DeformFunction(Function):
                @staticmethod
                def forward(ctx, input, offset):
                    if not input.is_cuda:
                        raise NotImplementedError("CUDA only")
                    return input + offset
            """,
            note="a forward that raises unless its input is on CUDA",
            findings=(
                Expected(
                    8,
                    12,
                    "`forward` raises unless `input` is a CUDA tensor (`not input.is_cuda`), which an XLA tensor "
                    "never is",
                ),
            ),
        ),
        invalid(
            """
            import torch
            import torch.utils.cpp_extension as cpp

            ops = cpp.load_inline(name="ops", cpp_sources=[""], cuda_sources=[""], functions=["scale"])


            class Scale(torch.nn.Module):
                def forward(self, x):
                    return ops.scale(x)
            """,
            alias=True,
            findings=(Expected(9, 16, "`ops.scale(...)` runs an op of a compiled extension (`cpp.load_inline(...)`"),),
        ),
        invalid(
            """
            import torch
            from torch.utils.cpp_extension import load

            fused = load(name="fused_bias_act", sources=["fused_bias_act.cpp", "fused_bias_act_kernel.cu"])


            class FusedBiasAct(torch.nn.Module):
                def forward(self, x, bias):
                    return fused.fused_bias_act(x, bias, 0.2)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(9, 16, "which raises on XLA tensors"),),
        ),
    ),
)


_EXTENSION_ADVICE = (
    "a model whose forward runs it fails at its first training step on XLA; write the op in torch operations "
    "(XLA compiles those), or keep this layer out of the model trained on XLA"
)


@reports_facts(COMPILED_EXTENSION_OP, nodes=lambda facts: facts.cuda_only.extension_ops)
def _extension_op(ctx: Context[Facts], original: cst.Call) -> str:
    return (
        f"`{ctx.code(original.func)}(...)` runs an op of a compiled extension "
        f"({ctx.facts.cuda_only.extension_ops[original]}), which raises on XLA tensors: {_EXTENSION_ADVICE}"
    )


@reports_facts(COMPILED_EXTENSION_OP, nodes=lambda facts: facts.cuda_only.extension_exports)
def _extension_export(ctx: Context[Facts], original: cst.Attribute) -> str:
    source, bound = ctx.facts.cuda_only.extension_exports[original]
    return (
        f"`{ctx.code(original)}` is an op of a compiled extension ({source}), which this module hands out as "
        f"`{bound}`: compiled CPU/CUDA kernels have no XLA implementation, so each call of `{bound}` with XLA "
        f"tensors raises; {_EXTENSION_ADVICE}"
    )


@reports_facts(COMPILED_EXTENSION_OP, nodes=lambda facts: facts.cuda_only.extension_calls)
def _extension_call(ctx: Context[Facts], original: cst.Call) -> str:
    source, tensor = ctx.facts.cuda_only.extension_calls[original]
    return (
        f"`{ctx.code(original.func)}(...)` runs an op of a compiled extension ({source}) on `{tensor}`, which the "
        "port puts on the XLA device: the op raises on XLA tensors, at every call; write it in torch operations "
        "(XLA compiles those), or hand it CPU tensors (and move its result to the device)"
    )


@on_facts(COMPILED_EXTENSION_OP, nodes=lambda facts: facts.cuda_only.cuda_only_forwards)
def _cuda_only_forward(
    ctx: Context[Facts], original: cst.UnaryOperation, updated: cst.UnaryOperation
) -> cst.UnaryOperation:
    import libcst as cst

    if isinstance(original.expression, cst.Attribute):
        ctx.report(
            COMPILED_EXTENSION_OP,
            original,
            f"`forward` raises unless `{ctx.code(original.expression.value)}` is a CUDA tensor "
            f"(`{ctx.facts.cuda_only.cuda_only_forwards[original]}`), which an XLA tensor never is (a layer built on a "
            f"CUDA extension, most often): {_EXTENSION_ADVICE}",
        )
    return updated
