"""XLA104's cases of a CUDA check around code that runs a third-party compiled CUDA op
(``device/third_party.py``: BasicSR's ``FusedLeakyReLU``): GFPGAN's tests skip their GPU-only
body with ``if torch.cuda.is_available():``.  Dropped, the body would run the op on the XLA
device, which raises there; kept, the body is skipped on XLA as on any host without CUDA."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

_GUARDED_TEST = """
import torch
from basicsr.ops.fused_act import FusedLeakyReLU


def test_fused_act():
    if torch.cuda.is_available():
        net = FusedLeakyReLU(4).cuda()
        net(torch.rand(1, 4, 8, 8).cuda())
"""
_ALIASED = substituted(
    _GUARDED_TEST,
    ("from basicsr.ops.fused_act import FusedLeakyReLU", "import basicsr.ops.fused_act as fa"),
    ("FusedLeakyReLU(4)", "fa.FusedLeakyReLU(4)"),
)


def _message(op: str) -> str:
    return (
        f"`torch.cuda.is_available()` guards code that runs `{op}` (basicsr.ops.fused_act.FusedLeakyReLU), which "
        "calls compiled CUDA kernels with no XLA implementation: left as is, so on XLA (no CUDA) the code under it "
        "is skipped, as on any host without CUDA (dropped, it would run on the XLA device and raise there); to run "
        "it on XLA, replace those ops with torch operations"
    )


def cuda_kernel_guard_cases() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            source,
            substituted(
                source,
                ("import torch\n", f"import torch\n{imports}\n"),
                ("(4).cuda()", f"(4).to({device})"),
                ("8).cuda()", f"8).to({device})"),
            ),
            target=target,
            alias=source is _ALIASED,
            note=f"a-check-around-a-compiled-cuda-op-stays-{name}-{target}",
            findings=(Expected(7, 8, _message(op)),),
        )
        for source, name, op in (
            (_GUARDED_TEST, "imported", "FusedLeakyReLU"),
            (_ALIASED, "aliased", "fa.FusedLeakyReLU"),
        )
        for target, imports, device in (
            ("2.9", "import torch_xla", "torch_xla.device()"),
            ("sagemaker", "import torch_xla.core.xla_model as xm", "xm.xla_device()"),
        )
    )
