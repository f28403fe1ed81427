"""XLA104's cases of checks that pick no device (a returned flag not named for CUDA, exits that
check no CUDA device, a synchronize's timing flag, a wrapper of something else), and of early
returns of the CPU, nested checks and checks asked through a method or a function of the file."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def not_a_device_choice_cases() -> tuple[Valid, ...]:
    return (
        valid(
            """
        import torch

        def build(cfg, model):
            if torch.cuda.is_available():
                print("GPUs:", cfg.NUM_GPUS)
            else:
                assert cfg.NUM_GPUS == 0
                print("running on the CPU")
            return model
        """,
            note="an-else-that-asserts-and-runs-more",
        ),
        valid(
            """
        import torch

        def get_args(parser):
            args = parser.parse_args()
            args.benchmark = torch.cuda.is_available() and args.fast
            return args
        """,
            filename="arguments.py",
            note="a-returned-flag-not-named-for-cuda-stays",
        ),
        valid(
            """
        import sys
        import torch

        def has_data(path):
            return os.path.exists(path)

        def count_gpus():
            return torch.cuda.device_count()

        if not has_data("data"):
            sys.exit()
        if not count_gpus():
            print("no GPU")
        """,
            note="exits-that-check-no-cuda-device-or-do-not-exit",
        ),
        valid(
            """
        import torch

        pin = torch.cuda.is_available()
        loader = DataLoader(ds, pin_memory=pin)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(0)
        """,
            note="not-a-device-choice",
        ),
        valid(
            """
        import torch


        def timed(closure, log_timings=True):
            log_timings = log_timings and torch.cuda.is_available()
            if log_timings:
                start = torch.cuda.Event(enable_timing=True)
                start.record()
            result = closure()
            if log_timings:
                torch.cuda.synchronize()
            return result
        """,
            """
        import torch
        import torch_xla.core.xla_model as xm


        def timed(closure, log_timings=True):
            log_timings = log_timings and torch.cuda.is_available()
            if log_timings:
                start = torch.cuda.Event(enable_timing=True)
                start.record()
            result = closure()
            if log_timings:
                xm.wait_device_ops()
            return result
        """,
            note="a flag that guards a synchronize and CUDA events times the step and picks no device: False on XLA",
        ),
        valid(
            """
        import torch

        if torch.cuda.is_available():
            name = "cuda"
        else:
            name = "cpu"
        print(name)
        """,
            note="a-cuda-string-that-no-device-uses",
        ),
        valid(
            """
        import torch

        def setup():
            if not torch.cuda.is_available():
                return
            torch.cuda.manual_seed_all(0)
        """,
            note="a-return-only-skips-cuda-code",
        ),
        valid(
            """
        import os
        import torch

        def has_checkpoint(path):
            return os.path.exists(path)

        if has_checkpoint("ckpt.pt"):
            device = torch.device("cuda")
        """,
            """
        import os
        import torch
        import torch_xla

        def has_checkpoint(path):
            return os.path.exists(path)

        if has_checkpoint("ckpt.pt"):
            device = torch_xla.device()
        """,
            note="a-wrapper-of-something-else",
        ),
    )


def early_return_and_wrapper_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
        import torch

        def build(cfg, model):
            if torch.cuda.is_available():
                print("GPUs:", cfg.NUM_GPUS)
            else:
                assert cfg.NUM_GPUS == 0, "no CUDA: set NUM_GPUS to 0"
            if cfg.NUM_GPUS:
                model = model.cuda()
            return model
        """,
            """
        import torch
        import torch_xla

        def build(cfg, model):
            print("GPUs:", cfg.NUM_GPUS)
            if cfg.NUM_GPUS:
                model = model.to(torch_xla.device())
            return model
        """,
            note="an-else-that-only-asserts-a-configuration-without-accelerators",
            findings=(Expected(5, 8, "`torch.cuda.is_available()`: the accelerator check holds for the XLA device"),),
        ),
        invalid(
            """
        import torch

        def default_device():
            if not torch.cuda.is_available():
                return torch.device("cpu")
            return torch.device("cuda")
        """,
            """
        import torch
        import torch_xla

        def default_device():
            return torch_xla.device()
        """,
            note="early-return-of-the-cpu",
            findings=(
                Expected(
                    5,
                    8,
                    "`not torch.cuda.is_available()`: the accelerator check holds for the XLA device, so the code under it never runs: removed",
                ),
            ),
        ),
        invalid(
            """
        import torch

        def default_device():
            if torch.cuda.is_available():
                if torch.cuda.is_initialized():
                    return torch.device(f"cuda:{torch.cuda.current_device()}")
                return torch.device("cuda")
            return torch.device("cpu")
        """,
            """
        import torch
        import torch_xla

        def default_device():
            return torch_xla.device()
            return torch_xla.device()
            return torch.device("cpu")
        """,
            note="nested-checks-and-the-current-index",
            findings=(
                Expected(5, 8, "`torch.cuda.is_available()`: the accelerator check holds"),
                Expected(6, 12, "`torch.cuda.is_initialized()`: the accelerator check holds"),
            ),
        ),
        invalid(
            """
        import torch

        def default_device():
            if torch.cuda.is_available():
                print(torch.cuda.get_device_name())
                return torch.device("cuda")
            return torch.device("cpu")
        """,
            """
        import torch
        import torch_xla

        def default_device():
            if torch.cuda.is_available():
                print(torch.cuda.get_device_name())
                return torch_xla.device()
            return torch.device("cpu")
        """,
            note="device-choice-blocked-by-cuda-only-code",
            findings=(
                Expected(
                    5,
                    8,
                    "`torch.cuda.is_available()` picks the device, and the code it guards also runs "
                    "`torch.cuda.get_device_name`, which fails without CUDA: left as is, so on XLA (no CUDA) the path "
                    "without CUDA runs and the model and tensors stay on the CPU",
                ),
            ),
        ),
        invalid(
            """
        import torch

        class CudaContext:
            def is_available(self) -> bool:
                return torch.cuda.is_available()

        def default_device(cuda: CudaContext) -> torch.device:
            if cuda.is_available():
                return torch.device("cuda", index=0)
            return torch.device("cpu")
        """,
            """
        import torch
        import torch_xla

        class CudaContext:
            def is_available(self) -> bool:
                return torch.cuda.is_available()

        def default_device(cuda: CudaContext) -> torch.device:
            if cuda.is_available():
                return torch_xla.device()
            return torch.device("cpu")
        """,
            note="availability-asked-through-a-method",
            findings=(
                Expected(
                    9,
                    8,
                    "`cuda.is_available()` picks the device, but `CudaContext.is_available` returns "
                    "`torch.cuda.is_available()`, which is False on XLA (no CUDA): the path without CUDA runs and the "
                    "model and tensors stay on the CPU; make `CudaContext.is_available` return True (the XLA device "
                    "is always present), or pick `torch_xla.device()` here",
                ),
            ),
        ),
        invalid(
            """
        import torch

        def cuda_ok():
            return torch.cuda.device_count() > 0

        if cuda_ok():
            device = torch.device("cuda")
        else:
            device = torch.device("cpu")
        """,
            """
        import torch
        import torch_xla

        def cuda_ok():
            return torch.cuda.device_count() > 0

        if cuda_ok():
            device = torch_xla.device()
        else:
            device = torch.device("cpu")
        """,
            note="availability-asked-through-a-function",
            findings=(
                Expected(
                    7,
                    4,
                    "`cuda_ok()` picks the device, but `cuda_ok` returns `torch.cuda.device_count() > 0`, which is "
                    "False on XLA (no CUDA): the path without CUDA runs and the model and tensors stay on the CPU; "
                    "make `cuda_ok` return True",
                ),
            ),
        ),
    )
