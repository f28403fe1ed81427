"""XLA107 cuda-tensor-type: ``torch.cuda.FloatTensor(...)`` becomes the CPU type's tensor moved to
the target's device; the type used as a value (not called, nor compared) is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_calls, on_references
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# ``FT = torch.cuda.FloatTensor if p.is_cuda else torch.FloatTensor`` (Towards-Realtime-MOT's loss): on
# XLA the CPU type; its tensors only meet XLA tensors in arithmetic and ``.item()``, which torch_xla takes.
CPU_TYPE_IN_ARITHMETIC = """
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, p, box, target, found):
        if found:
            lbox = (box - target).abs().mean()
        else:
            FT = torch.cuda.FloatTensor if p.is_cuda else torch.FloatTensor
            lbox, lconf = FT([0]), FT([0])
        lconf = p.mean()
        loss = torch.exp(-self.s_r) * lbox + lconf
        return loss, lbox.item()
"""
# The same choice (PyTorch_YOLOv3's yolo_layer), its CPU tensor in ``torch.max`` with an XLA tensor:
# "Expected XLA tensor. Got: torch.FloatTensor".
CPU_TYPE_IN_MAX = """
import torch
from torch import nn


class Layer(nn.Module):
    def forward(self, x, pred):
        dtype = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor
        truth = dtype(x.size(0), 4)
        truth[:, 2] = x[:, 0]
        return torch.max(pred, truth)
"""


CUDA_TENSOR_TYPE = Rule(
    code="XLA107",
    name="cuda-tensor-type",
    severity="error",
    summary="Legacy `torch.cuda.FloatTensor(...)` constructors create the tensor on the XLA device",
    fixable=True,
    why="Legacy typed constructors such as `torch.cuda.FloatTensor(...)` create CUDA tensors and raise without "
    "CUDA; the tensor is created on the CPU and moved to the XLA device. A type chosen by a tensor's own CUDA check "
    "(`FT = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`) is the CPU type on XLA: it is reported "
    "where its tensors meet XLA tensors in an operation that needs one device (`torch.max(pred, t)`, `torch.cat`, "
    "`a == t`, a call that hands them on: 'Expected XLA tensor'), not where they only meet them in arithmetic "
    "(`w * t`, which torch_xla 2.9 uploads them for) and host reads (`t.item()`): that runs (XLA105 says so).",
    examples=lambda: (
        invalid(
            """
            import torch

            noise = torch.cuda.FloatTensor(batch_size, 100).normal_()
            """,
            """
            import torch
            import torch_xla

            noise = torch.FloatTensor(batch_size, 100).to(torch_xla.device()).normal_()
            """,
            findings=(Expected(4, 9, "torch.cuda.FloatTensor(batch_size, 100) -> torch.FloatTensor(batch_size,"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            idx = torch.LongTensor(4).zero_()
            """,
        ),
        valid(
            """
            import torch

            if torch.cuda.HalfTensor in buckets:
                half = tp == torch.cuda.FloatTensor or tp in (torch.cuda.DoubleTensor, torch.cuda.HalfTensor)
            """,
            note="a membership or equality test names the type and creates no tensor",
        ),
        valid(
            """
            import torch
            from typing import Optional


            class Net(torch.nn.Module):
                def forward(self, points: torch.cuda.FloatTensor, mask: Optional[torch.cuda.ByteTensor] = None):
                    scale: torch.cuda.FloatTensor = points.new_ones(1)
                    if isinstance(points, (torch.cuda.FloatTensor, torch.FloatTensor)):
                        return points * scale
                    return points
            """,
            note="annotations and isinstance tests name the type and create no tensor",
        ),
        valid(
            """
            import torch as th


            def forward(points: th.cuda.FloatTensor) -> th.cuda.FloatTensor:
                return points if issubclass(type(points), th.cuda.FloatTensor) else points.float()
            """,
            note="an aliased type in annotations and an issubclass test",
        ),
        valid(CPU_TYPE_IN_ARITHMETIC, note="a-cpu-type-a-tensor-check-chooses-met-only-in-arithmetic-and-item"),
        valid(
            substituted(CPU_TYPE_IN_ARITHMETIC, ("import torch\n", "import torch as th\n"), ("torch.", "th.")),
            target="sagemaker",
            note="the-same-through-an-alias",
        ),
    ),
    invalid=lambda: (
        invalid(
            substituted(CPU_TYPE_IN_ARITHMETIC, ("torch.exp(-self.s_r) * lbox", "lbox * 2")),
            note="the-cpu-tensors-met-in-arithmetic-only-with-each-other-and-numbers-stay-on-the-cpu",
            findings=(Expected(10, 18, "`torch.cuda.FloatTensor` used as a value creates CUDA tensors"),),
        ),
        invalid(
            CPU_TYPE_IN_MAX,
            note="a-cpu-type-a-tensor-check-chooses-met-in-torch-max",
            findings=(Expected(7, 17, "`torch.cuda.FloatTensor` used as a value creates CUDA tensors"),),
        ),
        invalid(
            substituted(CPU_TYPE_IN_MAX, ("import torch\n", "import torch as th\n"), ("torch.", "th.")),
            target="sagemaker",
            alias=True,
            note="a-cpu-type-a-tensor-check-chooses-met-in-torch-max-through-an-alias",
            findings=(Expected(7, 17, "`th.cuda.FloatTensor` used as a value creates CUDA tensors"),),
        ),
        invalid(
            """
            import torch

            idx = torch.cuda.LongTensor(4).zero_()
            """,
            """
            import torch
            import torch_xla

            idx = torch.LongTensor(4).to(torch_xla.device()).zero_()
            """,
            findings=(Expected(4, 7, "torch.cuda.LongTensor(4) -> torch.LongTensor(4).to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch as th

            w = th.cuda.FloatTensor(2, 2)
            """,
            """
            import torch as th
            import torch_xla

            w = th.FloatTensor(2, 2).to(torch_xla.device())
            """,
            alias=True,
            findings=(Expected(4, 5, "th.cuda.FloatTensor(2, 2) -> th.FloatTensor(2, 2).to(torch_xla.device())"),),
        ),
        invalid(
            """
            import torch


            def forward(points: torch.cuda.FloatTensor):
                return points.type(torch.cuda.FloatTensor)
            """,
            note="the annotation is left alone, the type passed as a value beside it is reported",
            findings=(Expected(5, 24, "`torch.cuda.FloatTensor` used as a value creates CUDA tensors"),),
        ),
        invalid(
            """
            import torch

            torch.set_default_tensor_type(torch.cuda.FloatTensor)
            half = x.type(torch.cuda.HalfTensor)
            """,
            note="the type passed as a value makes new tensors CUDA tensors",
            findings=(
                Expected(3, 31, "`torch.cuda.FloatTensor` used as a value creates CUDA tensors"),
                Expected(4, 15, "`torch.cuda.HalfTensor` used as a value creates CUDA tensors"),
            ),
        ),
    ),
)


@on_calls(CUDA_TENSOR_TYPE, names=frozenset(apis.CUDA_TENSOR_TYPES))
def _tensor_type(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.BaseExpression:
    import libcst as cst

    func = updated.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)):
        ctx.report(CUDA_TENSOR_TYPE, original, "import the CPU tensor type and move the tensor with .to(device)")
        return updated
    tensor_module = func.value.value  # ``torch`` of ``torch.cuda.FloatTensor``

    def build() -> cst.Call | None:
        device = ctx.device()
        if device is None:
            return None
        cpu = updated.with_changes(func=func.with_changes(value=tensor_module))
        return cst.Call(func=cst.Attribute(value=cpu, attr=cst.Name("to")), args=[cst.Arg(device)])

    return ctx.fix_or_keep(updated, CUDA_TENSOR_TYPE, original, f"{ctx.code(original)} -> {{new}}", build)


@on_references(CUDA_TENSOR_TYPE, names=frozenset(apis.CUDA_TENSOR_TYPES))
def _tensor_type_value(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    parent = ctx.parent()
    called = type(parent).__name__ == "Call" and parent.func is original  # type: ignore[union-attr]  # a Call (checked by name: a rule module loads no LibCST)
    cpu_on_xla = parent in ctx.facts.device.cpu_type_choices and getattr(parent, "body", None) is original
    if not called and not cpu_on_xla and not _compared(ctx) and not _names_a_type(ctx):
        ctx.report(
            CUDA_TENSOR_TYPE,
            original,
            f"`{ctx.code(original)}` used as a value creates CUDA tensors: create them with "
            "torch.tensor(..., device=device) or move them with .to(device)",
        )
    return updated


def _names_a_type(ctx: Context[Facts]) -> bool:
    """The node being left is in an annotation (``def forward(self, x: torch.cuda.FloatTensor)``,
    ``y: Optional[torch.cuda.LongTensor] = None``) or is the type tested by ``isinstance`` or
    ``issubclass`` (``isinstance(x, (torch.cuda.FloatTensor, torch.FloatTensor))``): it names the
    type and creates no tensor."""
    ancestors = ctx.ancestors[:-1]
    if any(type(ancestor).__name__ == "Annotation" for ancestor in ancestors):
        return True
    for index in range(len(ancestors) - 1, 0, -1):
        kind = type(ancestors[index]).__name__
        if kind == "Arg":
            call = ancestors[index - 1]
            if type(call).__name__ != "Call":
                return False
            func, args = call.func, call.args  # type: ignore[attr-defined]  # a Call (checked by name)
            return (
                len(args) == 2
                and args[1] is ancestors[index]
                and type(func).__name__ == "Name"
                and func.value in ("isinstance", "issubclass")
            )
        if kind not in ("Element", "Tuple"):
            return False
    return False


def _compared(ctx: Context[Facts]) -> bool:
    """The node being left is an operand of a comparison (``tp == torch.cuda.FloatTensor``,
    ``torch.cuda.HalfTensor in buckets``), alone or in a tuple, list or set operand: the test
    names the type and creates no tensor."""
    for ancestor in reversed(ctx.ancestors[:-1]):
        kind = type(ancestor).__name__
        if kind in ("Comparison", "ComparisonTarget"):
            return True
        if kind not in ("Element", "Tuple", "List", "Set"):
            return False
    return False
