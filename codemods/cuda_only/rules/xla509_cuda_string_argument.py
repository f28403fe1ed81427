"""XLA509 cuda-string-argument: a "cuda" string handed to a project class or function that uses
it as a device (``MemoryMonitor("cuda")``) becomes the XLA device's string where the callee is
converted in the same run; otherwise it is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.device.rules.programs import ENVIRONMENT_FLAG, ENVIRONMENT_FLAG_PORTED
from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CUDA_STRING_ARGUMENT = Rule(
    code="XLA509",
    name="cuda-string-argument",
    severity="error",
    summary='A "cuda" string handed to a class or function of the project: followed into it, made "xla" where it '
    "is only a device there, else reported",
    fixable=True,
    why='The device rewrites turn "cuda" into the XLA device where a device goes (`.to()`, `device=`, a device '
    'variable). A "cuda" handed to the project\'s own code (`make_buffer(8, "cuda")`, '
    '`MemoryMonitor("cuda")`) goes wherever that code sends it: into `torch.zeros(..., device=device)` it '
    "fails on XLA. A callable of the file is followed: where its parameter (or the `self` attribute it is stored "
    'in) is used only as a device (`device=`, `.to()`, `torch.device()`), the string becomes "xla"; where it is '
    "used as a device and otherwise too (a CUDA memory statistic that needs the CUDA name), it is reported; where "
    "it is never a device (statistics only, a log line), nothing is said here (those uses have their own "
    "findings). A callable of another module is not followed: reported; one of the standard library is no device's "
    '(`os.path.join(this_dir, "cuda", "*.cu")` names a directory): nothing is said.',
    examples=lambda: (
        invalid(
            """
            import torch


            def make_buffer(size, device):
                return torch.zeros(size, device=device)


            buffer = make_buffer(8, "cuda")
            """,
            """
            import torch


            def make_buffer(size, device):
                return torch.zeros(size, device=device)


            buffer = make_buffer(8, "xla")
            """,
            findings=(Expected(8, 25, '"cuda" -> "xla": `make_buffer` uses its `device` only as a device'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import glob
            import os

            import torch

            this_dir = os.path.dirname(os.path.abspath(__file__))
            sources = glob.glob(os.path.join(this_dir, "cuda", "*.cu"))
            """,
            note="a-cuda-directory-in-a-standard-library-path-is-no-device",
        ),
        valid(
            """
            import os.path as osp

            import torch

            kernels = osp.join(osp.dirname(__file__), "csrc", "cuda")
            """,
            target="sagemaker",
            note="a-cuda-directory-in-a-standard-library-path-is-no-device-alias",
        ),
        valid(
            ENVIRONMENT_FLAG,
            ENVIRONMENT_FLAG_PORTED,
            note="a-string-default-whose-result-is-compared-with-strings",
        ),
        valid(
            """
            import torch


            class MemoryMonitor:
                def __init__(self, device):
                    self.device = device

                def peak(self):
                    return torch.cuda.max_memory_allocated(self.device)


            monitor = MemoryMonitor("cuda")
            print(format_name("cuda"))
            """,
            note="never-a-device",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from utils.monitor import MemoryMonitor as Monitor


            class Cache:
                def __init__(self, size, device="cpu"):
                    self.device = device
                    self.table = torch.zeros(size).to(self.device)

                def stats(self):
                    return torch.cuda.memory_allocated(self.device)


            cache = Cache(16, "cuda")
            monitor = Monitor("cuda")
            """,
            alias=True,
            findings=(
                Expected(14, 19, "`Cache` uses its `device` as a device and otherwise too"),
                Expected(15, 19, "`Monitor` comes from `utils.monitor`, which this file does not follow"),
            ),
        ),
        invalid(
            """
            import torch


            class Probe:
                def __init__(self, device):
                    self.device = torch.device(device)


            probe = Probe("cuda:0")
            """,
            """
            import torch


            class Probe:
                def __init__(self, device):
                    self.device = torch.device(device)


            probe = Probe("xla")
            """,
            target="sagemaker",
            note="class-sagemaker",
            findings=(Expected(9, 15, '-> "xla": `Probe` uses its `device` only as a device'),),
        ),
    ),
)


@on_facts(CUDA_STRING_ARGUMENT, nodes=lambda facts: facts.cuda_only.handed_strings)
def _handed_string(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import quoted_like

    handed = ctx.facts.cuda_only.handed_strings[original]
    code = ctx.code(original)
    device = ctx.target.device_string
    if not handed.converted or type(original) is not cst.SimpleString:
        ctx.report(
            CUDA_STRING_ARGUMENT,
            original,
            f"{code} handed to `{handed.callee}`: {handed.said}; on XLA there is no CUDA device, so where it "
            f'is a device there it fails: hand it "{device}" (the XLA device) for those uses',
        )
        return updated
    return ctx.fix_or_keep(
        updated,
        CUDA_STRING_ARGUMENT,
        original,
        f"{code} -> {{new}}: {handed.said}, which is the XLA device now",
        lambda: quoted_like(original, device),
    )
