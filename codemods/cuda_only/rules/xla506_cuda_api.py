"""XLA506 cuda-api."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_API = Rule(
    code="XLA506",
    name="cuda-api",
    severity="error",
    summary="CUDA-only API with no XLA equivalent",
    fixable=False,
    why="Most torch.cuda APIs raise without CUDA (device names and properties, streams, events, graphs); the "
    "others return values that mislead the script (a device count of 0). torch.nn.SyncBatchNorm is reported "
    "too: it takes CUDA and XPU tensors only, and raises on XLA ones once a process group is started. Each needs a person's decision: "
    "remove it, guard it, or use the XLA equivalent.",
    examples=lambda: (
        invalid(
            """
            import torch

            print("training on", torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 22, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            print(torch.__version__)
            """,
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available():
                start = torch.cuda.Event(enable_timing=True)
            """,
            note="under-cuda-check",
        ),
        valid(
            """
            import torch

            if torch.cuda.is_available() and args.verbose:
                print(torch.cuda.get_device_name(0))
            """,
            target="sagemaker",
            note="under-cuda-check-sagemaker",
        ),
        valid(
            """
            import torch

            tf32 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


            def capability():
                if not torch.cuda.is_available():
                    return None
                return torch.cuda.get_device_capability()
            """,
            note="behind a short-circuit or an early return on a kept availability check: never runs on XLA",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            tf32 = torch.cuda.get_device_capability()[0] >= 8 and torch.cuda.is_available()


            def name():
                if not torch.cuda.is_available():
                    print("no CUDA")
                return torch.cuda.get_device_name(0)
            """,
            note="before the availability check, or after an if that does not leave: runs on XLA",
            findings=(
                Expected(3, 8, "`torch.cuda.get_device_capability` is CUDA-only and raises without CUDA"),
                Expected(9, 12, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA"),
            ),
        ),
        invalid(
            """
            import torch

            print(torch.cuda.get_device_name(0))
            """,
            findings=(
                Expected(
                    3, 7, "`torch.cuda.get_device_name` is CUDA-only and raises without CUDA; remove it or guard it"
                ),
            ),
        ),
        invalid(
            """
            import torch

            print(torch.cuda.memory_summary())
            """,
            note="memory-summary-raises",
            findings=(
                Expected(
                    3,
                    7,
                    "`torch.cuda.memory_summary` raises without CUDA (KeyError: its statistics are empty); use "
                    "xm.get_memory_info(device) for XLA memory",
                ),
            ),
        ),
        invalid(
            """
            import torch

            state = torch.cuda.get_rng_state()
            """,
            note="any-other-torch-cuda-api",
            findings=(Expected(3, 9, "`torch.cuda.get_rng_state` is CUDA-only; remove it or guard it"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import device_count

            ngpus = device_count()
            """,
            alias=True,
            findings=(
                Expected(4, 9, "`device_count` is CUDA-only and has no XLA equivalent here; remove it or guard it"),
            ),
        ),
        invalid(
            """
            import torch

            start = torch.cuda.Event(enable_timing=True)
            """,
            note="event-timing",
            findings=(Expected(3, 9, "xm.wait_device_ops() and time.perf_counter()"),),
        ),
    ),
)
