"""XLA106 set-device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

SET_DEVICE = Rule(
    code="XLA106",
    name="set-device",
    severity="error",
    summary="`torch.cuda.set_device()` is removed: one XLA device per process",
    fixable=True,
    why="`torch.cuda.set_device()` raises without CUDA. On XLA the runtime gives each process its one device, "
    "so the call is removed.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.set_device(args.local_rank)
            device = torch.device("cuda", args.local_rank)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(4, 1, "removed `torch.cuda.set_device(args.local_rank)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            xla_runtime.set_device(0)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            def setup(rank):
                torch.accelerator.set_device_index(rank)
                return torch.accelerator.current_accelerator()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def setup(rank):
                return torch.device("xla")
            """,
            note="torch-accelerator",
            findings=(Expected(5, 5, "removed `torch.accelerator.set_device_index(rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                torch.cuda.set_device(gpu)
            """,
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                pass
            """,
            note="only-statement",
            findings=(Expected(5, 5, "removed `torch.cuda.set_device(gpu)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            set_device(args.local_rank)
            train()
            """,
            """
            import torch

            train()
            """,
            alias=True,
            findings=(Expected(3, 1, "removed `set_device(args.local_rank)`"),),
        ),
    ),
)
