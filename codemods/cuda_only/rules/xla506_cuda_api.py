"""XLA506 cuda-api."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_API = Rule(
    code="XLA506",
    name="cuda-api",
    severity="error",
    summary="CUDA-only API with no XLA equivalent",
    fixable=False,
    why="Most torch.cuda APIs raise without CUDA (device names and properties, streams, events, graphs). "
    "`torch.cuda.device_count()` (0 there) and `torch.cuda.is_bf16_supported()` (False) return: they are "
    "errors only where the answer breaks the script (a division by the count, a batch size or a device list of "
    "0, a branch that stops the script, a failing assert, or a use the tool does not follow: another callable, a "
    "return); where they only choose a branch they are reported as CUDA checks (XLA105), where they change "
    "nothing as notes (XLA511). torch.nn.SyncBatchNorm is reported "
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
        valid(
            """
            import torch

            num_gpus = torch.cuda.device_count()
            if num_gpus > 1:
                raise SystemExit("start the script with torchrun for several GPUs")
            if torch.cuda.is_bf16_supported():
                print("this GPU supports bfloat16: pass --bf16")
            """,
            note="a count and a bfloat16 check whose answers on XLA change nothing (XLA511)",
        ),
        valid(
            """
            import torch


            def main(tf32: bool = True):
                if tf32 and not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8):
                    print("TF32 needs an Ampere GPU")
                    tf32 = False
            """,
            note="a capability read under a negated availability check in an and: never runs on XLA",
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
            batch_size = 256 // ngpus
            """,
            alias=True,
            findings=(
                Expected(
                    4,
                    9,
                    "`device_count()` is 0 on an XLA host (no CUDA device): `256 // ngpus` raises ZeroDivisionError; "
                    "count the XLA devices with xr.world_size() (one device per process: 1)",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def setup(args):
                args.n_gpu = torch.cuda.device_count()
                if args.n_gpu == 0:
                    raise SystemExit("no GPU found")
                args.train_batch_size = args.per_gpu_batch_size * args.n_gpu
                assert torch.cuda.is_bf16_supported(), "needs bfloat16"
            """,
            note="a count that stops the script or computes a batch size; a bfloat16 check in an assert",
            findings=(
                Expected(
                    5,
                    18,
                    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `args.n_gpu == 0` "
                    "is True there, and the branch it takes stops the script",
                ),
                Expected(
                    9,
                    12,
                    "`torch.cuda.is_bf16_supported()` is False on an XLA host (no CUDA device): `assert "
                    'torch.cuda.is_bf16_supported(), "needs bfloat16"` fails there (AssertionError); XLA devices '
                    "compute in bfloat16",
                ),
            ),
        ),
        invalid(
            """
            import torch

            gpus = list(range(torch.cuda.device_count()))
            """,
            target="sagemaker",
            note="a list of devices made from the count (sagemaker)",
            findings=(Expected(3, 19, "count the XLA devices with xm.xrt_world_size()"),),
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
