"""XLA512 compiled-extension-op: a forward that runs a compiled C++/CUDA extension's op
(``cpp_extension.load``, a relative import of a built module, a module a setup.py of the project builds
with ``CUDAExtension``/``CppExtension``), or raises unless its input is a
CUDA tensor, fails at the first training step on XLA.  Reported at the call or the test."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts, reports_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

COMPILED_EXTENSION_OP = Rule(
    code="XLA512",
    name="compiled-extension-op",
    severity="error",
    summary="A forward that runs a compiled C++/CUDA extension's op, or raises unless its input is a CUDA tensor",
    fixable=False,
    why="Ops of a compiled extension (built with torch.utils.cpp_extension: `load(...)`, `load_inline(...)`, "
    "or in place by the project's setup.py, imported as `from ._ext import ...`, a relative import that finds "
    "no Python module of the project, or named in a `CUDAExtension(name=...)`/`CppExtension(name=...)` of a "
    "setup.py of the project and imported by that name, `import pointnet2._ext as _ext`) read their tensors' memory through CUDA (or the CPU): they raise on XLA "
    "tensors, and so does a forward that starts with `if not x.is_cuda: raise ...`, which an XLA tensor never "
    "passes. Any model whose forward runs one fails at its first training step on XLA. The tool cannot port "
    "the op: write it in torch operations (which XLA compiles), or keep the layer out of the model trained on "
    "XLA. A single file whose folder is not known cannot tell an extension from a module it could not read: "
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
