"""XLA107 cuda-tensor-type: ``torch.cuda.FloatTensor(...)`` becomes the CPU type's tensor moved to
the target's device; the type used as a value (not called, nor compared) is reported."""

from __future__ import annotations

from textwrap import dedent
from typing import TYPE_CHECKING

from codemods import apis
from codemods.engine.hooks import on_calls, on_facts, on_references
from codemods.engine.rule import Expected, Invalid, Rule, invalid, substituted, valid

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
    "CUDA; the tensor is created on the CPU and moved to the XLA device. A CUDA default for new tensors "
    '(`torch.set_default_tensor_type("torch.cuda.FloatTensor")`, `torch.set_default_device("cuda")`) sends every '
    "tensor made without a device (`torch.tensor(obs)`, `torch.zeros(n)`, in any module of the project) and every "
    'module built after it to CUDA: without CUDA the call raises ("Found no NVIDIA driver"), and under a CUDA '
    "check (recurrent-ppo-truncated-bptt's train.py) it is skipped on XLA, so those tensors stay on the CPU and the "
    "first forward of the model on the XLA device raises. It becomes `torch.set_default_device(torch_xla.device())` "
    "(checked on torch_xla 2.9: `torch.tensor`, `torch.zeros`, `torch.as_tensor` and new modules land on the XLA "
    "device; `torch.from_numpy` stays on the CPU, as it did under the CUDA type), and a check around it goes "
    "(XLA104). It stays, an error, where that is not the same: another dtype's type (`torch.cuda.DoubleTensor` also "
    "sets the default dtype), a file that sets the default dtype too (the CUDA FloatTensor type resets it to "
    "float32), and the sagemaker target, whose torch (1.13) has no default device. Where the file's legacy "
    "constructors (`torch.Tensor(...)`) rely on it, it stays too: they do not follow a default device (XLA116). "
    "A type chosen by a tensor's own CUDA check "
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

            torch.set_default_tensor_type("torch.FloatTensor")
            torch.set_default_device("cpu")
            torch.set_default_dtype(torch.float32)
            """,
            note="cpu-defaults-and-a-dtype-stay",
        ),
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
            """
            import torch
            import torch_xla

            torch.set_default_device(torch_xla.device())
            half = x.type(torch.cuda.HalfTensor)
            """,
            note="the type passed as a value makes new tensors CUDA tensors; as the default, the default device",
            target_only=True,  # the sagemaker target's torch has no default device (the case below)
            findings=(
                Expected(4, 1, "torch.set_default_tensor_type(torch.cuda.FloatTensor) -> torch.set_default_device("),
                Expected(5, 15, "`torch.cuda.HalfTensor` used as a value creates CUDA tensors"),
            ),
        ),
        *_default_cases(),
    ),
)

_PORTED_DEFAULT = (
    'torch.set_default_tensor_type("torch.cuda.FloatTensor") -> torch.set_default_device(torch_xla.device()): '
    "tensors made without a device (`torch.tensor(...)`, `torch.zeros(...)`, in any module) and modules built after "
    "it go to the XLA device, as they went to CUDA (the legacy `torch.Tensor(...)` constructors do not follow a "
    "default device)"
)


def _default_cases() -> tuple[Invalid, ...]:
    """A CUDA default for new tensors (recurrent-ppo-truncated-bptt's train.py): torch 2's
    default device where the target has one and the call sets nothing else."""
    guarded = dedent(
        """
        import numpy as np
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if torch.cuda.is_available():
            torch.set_default_tensor_type("torch.cuda.FloatTensor")
        model = torch.nn.LSTM(4, 8).to(device)
        out, _ = model(torch.tensor(np.zeros((1, 2, 4), np.float32)))
        """
    )
    return (
        invalid(
            guarded,
            """
            import numpy as np
            import torch
            import torch_xla

            device = torch_xla.device()
            torch.set_default_device(torch_xla.device())
            model = torch.nn.LSTM(4, 8).to(device)
            out, _ = model(torch.tensor(np.zeros((1, 2, 4), np.float32)))
            """,
            note="a-cuda-default-tensor-type-under-a-cuda-check-becomes-the-xla-default-device",
            target_only=True,
            findings=(Expected(6, 1, _PORTED_DEFAULT),),
        ),
        invalid(
            substituted(guarded, ("import torch\n", "import torch as th\n"), ("torch.", "th."), ('"th.', '"torch.')),
            substituted(
                guarded,
                ("import torch\n", "import torch as th\nimport torch_xla.core.xla_model as xm\n"),
                ("torch.", "th."),
                ('"th.', '"torch.'),
                ('th.device("cuda" if th.cuda.is_available() else "cpu")', "xm.xla_device()"),
                ("if th.cuda.is_available():\n    th.set", "th.set"),
            ),
            target="sagemaker",
            alias=True,
            note="torch-1.13-has-no-default-device-for-xla",
            findings=(
                Expected(
                    6,
                    1,
                    '`th.set_default_tensor_type("torch.cuda.FloatTensor")` makes CUDA the default for new tensors, '
                    "and the torch of torch_xla 1.13 has no `torch.set_default_device`: on XLA (no CUDA) the call "
                    'fails ("Found no NVIDIA driver"), and without it tensors made without a device',
                ),
            ),
        ),
        invalid(
            """
            import torch

            torch.set_default_device("cuda")
            x = torch.zeros(3)
            """,
            """
            import torch
            import torch_xla

            torch.set_default_device(torch_xla.device())
            x = torch.zeros(3)
            """,
            note="a-cuda-default-device-becomes-the-xla-device",
            target_only=True,
            findings=(
                Expected(4, 1, 'torch.set_default_device("cuda") -> torch.set_default_device(torch_xla.device())'),
            ),
        ),
        invalid(
            """
            import torch

            torch.set_default_tensor_type("torch.cuda.DoubleTensor")
            """,
            note="a-default-type-of-another-dtype-is-reported",
            findings=(
                Expected(
                    3,
                    0,
                    "`torch.cuda.DoubleTensor` also sets the default dtype, which `torch.set_default_device` does not",
                ),
            ),
        ),
        invalid(
            """
            import torch

            torch.set_default_dtype(torch.float64)
            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            """,
            note="a-default-type-beside-a-default-dtype-is-reported",
            findings=(Expected(4, 0, "the file also sets the default dtype, which `torch.cuda.FloatTensor` resets"),),
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


# What every tensor made without a device and every module built after the call does.
_NEW_TENSORS = (
    "tensors made without a device (`torch.tensor(...)`, `torch.zeros(...)`, in any module) and modules built after it"
)


@on_facts(CUDA_TENSOR_TYPE, nodes=lambda facts: facts.device.cuda_defaults)
def _cuda_default(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """``torch.set_default_tensor_type("torch.cuda.FloatTensor")``, ``torch.set_default_device("cuda")``
    -> ``torch.set_default_device(torch_xla.device())`` (torch 2's default device, which torch 1.13,
    the sagemaker target's, lacks)."""
    import libcst as cst

    named = ctx.facts.device.cuda_defaults[original]
    device_call = not named.startswith("torch.cuda.")
    if original in ctx.facts.obligations.broken:
        return updated  # a legacy constructor relies on it, which a default device does not reach (XLA116)
    cause = None
    if ctx.target.torch_xla_version.startswith("1."):
        cause = f"the torch of torch_xla {ctx.target.torch_xla_version} has no `torch.set_default_device`"
    elif not device_call and named != "torch.cuda.FloatTensor":
        cause = f"`{named}` also sets the default dtype, which `torch.set_default_device` does not"
    elif not device_call and ctx.facts.device.sets_default_dtype:
        cause = "the file also sets the default dtype, which `torch.cuda.FloatTensor` resets to float32"
    if cause is not None:
        ctx.report(
            CUDA_TENSOR_TYPE,
            original,
            f"`{ctx.code(original)}` makes CUDA the default for new tensors, and {cause}: on XLA (no CUDA) the "
            f'call fails ("Found no NVIDIA driver"), and without it {_NEW_TENSORS} stay on the CPU while the model '
            "is on the XLA device; make them with `device=device` or move them with `.to(device)`, then remove it",
        )
        return updated

    def build() -> cst.Call | None:
        device = ctx.device()
        if device is None:
            return None
        func = updated.func
        new_func = func.with_changes(attr=cst.Name("set_default_device")) if isinstance(func, cst.Attribute) else func
        return cst.Call(func=new_func, args=[cst.Arg(device)])

    new = ctx.fix_or_keep(
        updated,
        CUDA_TENSOR_TYPE,
        original,
        f"{ctx.code(original)} -> {{new}}: {_NEW_TENSORS} go to the XLA device, as they went to CUDA (the legacy "
        "`torch.Tensor(...)` constructors do not follow a default device)",
        build,
    )
    if new is not updated:
        ctx.forget_fixes_inside(original)
    return new


@on_references(CUDA_TENSOR_TYPE, names=frozenset(apis.CUDA_TENSOR_TYPES))
def _tensor_type_value(ctx: Context[Facts], original: cst.CSTNode, updated: cst.CSTNode, qualified: str) -> cst.CSTNode:
    parent = ctx.parent()
    called = type(parent).__name__ == "Call" and parent.func is original  # type: ignore[union-attr]  # a Call (checked by name: a rule module loads no LibCST)
    if len(ctx.ancestors) > 2 and ctx.ancestors[-3] in ctx.facts.device.cuda_defaults:
        return updated  # the default tensor type: the call's own finding
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
