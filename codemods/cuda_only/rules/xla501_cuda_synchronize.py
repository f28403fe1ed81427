"""XLA501 cuda-synchronize."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_SYNCHRONIZE = Rule(
    code="XLA501",
    name="cuda-synchronize",
    severity="error",
    summary="`torch.cuda.synchronize()` becomes `xm.wait_device_ops()`",
    fixable=True,
    why="`torch.cuda.synchronize()` raises without CUDA; `xm.wait_device_ops()` waits for the XLA device's "
    "pending work, which is what timing code around it needs.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.synchronize()
            elapsed = time.time() - start
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            elapsed = time.time() - start
            """,
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="already-xla",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            findings=(Expected(4, 1, "torch.cuda.synchronize() -> xm.wait_device_ops()"),),
        ),
        invalid(
            """
            import time
            import torch

            start = time.time()
            out = model(x)
            torch.cuda.synchronize()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            """
            import time
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            start = time.time()
            out = model(x)
            torch_xla.sync()
            xm.wait_device_ops()  # wait for the kernels
            print(f"forward took {time.time() - start:.3f}s")
            """,
            note="timing-needs-the-barrier-first",
            findings=(
                Expected(9, 1, "torch.cuda.synchronize() before reading a clock -> xm.wait_device_ops() (after"),
            ),
        ),
        invalid(
            """
            import torch

            torch.cuda.synchronize(device)
            """,
            note="with-argument-reported",
            findings=(Expected(3, 1, "`torch.cuda.synchronize(device)`"),),
        ),
    ),
)
