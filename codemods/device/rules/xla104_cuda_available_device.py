"""XLA104 cuda-available-device."""

from __future__ import annotations

from codemods.device.rules.cpu_fallback_cases import cpu_fallback_cases
from codemods.device.rules.device_string_chain_cases import device_string_chain_cases
from codemods.device.rules.host_move_cases import host_move_cases, host_move_valid_cases
from codemods.engine.rule import Expected, Rule, invalid, valid

CUDA_AVAILABLE_DEVICE = Rule(
    code="XLA104",
    name="cuda-available-device",
    severity="error",
    summary="`torch.cuda/accelerator.is_available()` that picks the device: the XLA device is always there",
    fixable=True,
    why="`torch.cuda.is_available()` is False on an XLA machine, so a device picked by it silently falls back "
    "to the CPU and the script trains there. Where the check picks the device it is dropped; a `--no-cuda` "
    "flag still selects the CPU. `assert torch.cuda.is_available()` is removed, and so is an exit under "
    "`if not verify_min_gpu_count(...):` when that function of the file checks for CUDA devices and counts "
    "them (pytorch/examples minGPT-DDP): both are always true on XLA, where the script would end there; the "
    "XLA launcher starts one process per XLA device, so a minimum number of devices is no longer enforced "
    "(the finding says so). `torch.cuda.is_initialized()` (OLMo's `is_available() and is_initialized()`) "
    "is such a check too: it asks whether this process has set CUDA up, which on XLA it never has. An early "
    '`if not torch.cuda.is_available(): return torch.device("cpu")` picks the device as well, and goes; so does '
    '`if torch.cuda.is_available(): device_type = "cuda"` (then `elif ...: "mps"`, `else: "cpu"`) where the name '
    "reaches `torch.device(...)` or `.to(...)` (a later `assert device_type in ['cuda', ...]` lists 'xla' too, "
    "XLA114). A check "
    "whose code also runs a CUDA-only call (one that raises without CUDA) cannot be dropped: it stays, and "
    "its error says that the path without CUDA runs there, so the model and tensors stay on the CPU. A check "
    "asked through a function or method of the file (`if cuda.is_available():`, where that method returns "
    "`torch.cuda.is_available()` or `torch.cuda.device_count() > 0`: fairseq2's `CudaContext`) is left as "
    "is and is an error: on XLA the wrapper returns False, so the device it picks is the CPU; make the "
    "wrapper return True, or pick `torch_xla.device()` there. Wrappers in other files are not followed. A flag "
    "that picks the device in another module of the project is dropped too: a flag named for CUDA or the GPU "
    "that a function returns on an object (`args.cuda = not args.no_cuda and torch.cuda.is_available(); return "
    "args` in arguments.py, read by main.py), and a flag handed to a callable of a project module whose device "
    "choice reads it (`args.use_gpu = torch.cuda.is_available() and args.use_gpu`, then `Exp(args)`, whose base "
    "class picks `cuda` under `if self.args.use_gpu:`). A file that chooses the device with another module's "
    "flag follows it there (XLA111, XLA112). A check that guards only a move to the host (`x.cpu() if "
    "torch.cuda.is_available() else x`; `if torch.cuda.is_available(): return x.cpu()` then `return x`; "
    "`x = x.cpu()` under it) goes too: the device tensor it would hand back on XLA raises at `.numpy()`, and "
    "`.cpu()` of a CPU tensor is the tensor; where the path without the move does something else, the check "
    "stays (XLA105). A CPU fallback of a device attribute that the file does not otherwise set (`if not "
    'torch.cuda.is_available(): config.device = "cpu"` in a function that updates a config object whose default '
    '`config.device = "cuda"` is set in another module or a config file) stays and is an error: removing the check '
    "alone would leave that default to send the model to CUDA, a crash on an XLA host where the original at least "
    "ran on the CPU, and the port cannot tie the fallback to the default it guards. Where the file sets the "
    'attribute too (`config.device = "cuda"` before the check, or an argparse `--device` default), that value is '
    "ported with it and the check goes.",
    examples=lambda: (
        invalid(
            """
            import torch

            use_cuda = not args.no_cuda and torch.cuda.is_available()
            device = torch.device("cuda" if use_cuda else "cpu")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            use_cuda = not args.no_cuda
            device = torch.device("xla" if use_cuda else "cpu")
            """,
            findings=(Expected(4, 12, "`use_cuda` picks the device"),),
        ),
    ),
    valid=lambda: (
        *host_move_valid_cases(),
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
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch.distributed as dist

            def setup():
                if not torch.cuda.is_available():
                    raise SystemExit("this example needs CUDA")
                if torch.cuda.is_available():
                    backend = "nccl"
                else:
                    raise RuntimeError("no GPU")
                dist.init_process_group(backend)
            """,
            """
            import torch
            import torch.distributed as dist
            import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

            def setup():
                backend = "xla"
                dist.init_process_group(backend, init_method="xla://")
            """,
            note="a-check-that-stops-the-script-without-cuda",
            findings=(
                Expected(
                    6,
                    8,
                    "`not torch.cuda.is_available()`: the accelerator check holds for the XLA device, "
                    "so the code under it never runs: removed",
                ),
                Expected(
                    7,
                    8,
                    "`torch.cuda.is_available()`: the accelerator check holds for the XLA device, "
                    "so the code under it always runs: check dropped",
                ),
            ),
        ),
        invalid(
            """
            import sys
            import torch

            def verify_min_gpu_count(min_gpus: int = 2) -> bool:
                has_gpu = torch.accelerator.is_available()
                gpu_count = torch.accelerator.device_count()
                return has_gpu and gpu_count >= min_gpus

            def main():
                if not verify_min_gpu_count(min_gpus=2):
                    print("Unable to locate sufficient 2 gpus to run this example. Exiting.")
                    sys.exit()
                train()
            """,
            """
            import torch

            def verify_min_gpu_count(min_gpus: int = 2) -> bool:
                has_gpu = torch.accelerator.is_available()
                gpu_count = torch.accelerator.device_count()
                return has_gpu and gpu_count >= min_gpus

            def main():
                train()
            """,
            note="minimum-gpu-count-exit-removed",
            findings=(Expected(9, 5, "removed `if not verify_min_gpu_count(min_gpus=2):` and the exit under it"),),
        ),
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                # move the model to the GPU
                model.cuda()
            else:
                print("cpu only")
            """,
            """
            import torch
            import torch_xla

            # move the model to the GPU
            model.to(torch_xla.device())
            """,
            note="if-statement",
            findings=(Expected(4, 4, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            cuda = True if torch.cuda.is_available() else False
            Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            """,
            note="flag-blocked-by-cuda-only-code",
            findings=(
                Expected(
                    3, 8, "`cuda` picks the device but also guards `torch.cuda.FloatTensor`, which fails without CUDA"
                ),
            ),
        ),
        invalid(
            """
            import torch

            for x, y in loader:
                if torch.cuda.is_available():  # move the batch
                    x = x.cuda()
                    # the targets stay on the host
                else:
                    x = x.float()
                    # nothing to move
                print(x)
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                # move the batch
                x = x.to(torch_xla.device())
                # the targets stay on the host
                print(x)
            """,
            note="unwrapped-block-keeps-its-comments",
            findings=(Expected(5, 8, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            for x in loader:
                if torch.cuda.is_available():
                    x = x.cuda()
                elif torch.cuda.device_count() == 0:
                    x = x.float()
                # LibCST gives this line to the elif's block
                    # and this one
                print(x)
            """,
            """
            import torch
            import torch_xla

            for x in loader:
                x = x.to(torch_xla.device())
                # LibCST gives this line to the elif's block
                # and this one
                print(x)
            """,
            note="removed-branch-keeps-the-comments-after-it",
            findings=(Expected(5, 8, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            use_accel = not args.no_accel and torch.accelerator.is_available()
            if use_accel:
                device = torch.accelerator.current_accelerator()
            else:
                device = torch.device("cpu")
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            use_accel = not args.no_accel
            if use_accel:
                device = torch.device("xla")
            else:
                device = torch.device("cpu")
            """,
            note="torch-accelerator",
            findings=(Expected(4, 13, "`use_accel` picks the device"),),
        ),
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                torch.cuda.synchronize()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.wait_device_ops()
            """,
            note="guard-of-ported-code",
            findings=(Expected(4, 4, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            def default_device():
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    return torch.device("cuda")
                else:
                    return torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            def default_device():
                return torch_xla.device()
            """,
            note="cuda-initialized-is-an-accelerator-check",
            findings=(
                Expected(
                    5, 8, "`torch.cuda.is_available() and torch.cuda.is_initialized()`: the accelerator check holds"
                ),
            ),
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
        *cpu_fallback_cases(),
        *device_string_chain_cases(),
        *host_move_cases(),
        invalid(
            """
            import torch

            if args.mps:
                device = torch.device("mps")
            elif torch.cuda.is_available():  # GPU
                device = torch.device("cuda")
            else:
                device = torch.device("cpu")
            """,
            """
            import torch
            import torch_xla

            if args.mps:
                device = torch.device("mps")
            else:  # GPU
                device = torch_xla.device()
            """,
            note="elif",
            findings=(Expected(6, 6, "`torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            def warm_up():
                if not torch.cuda.is_available():
                    torch.cuda.synchronize()
            """,
            """
            import torch

            def warm_up():
                pass
            """,
            note="branch-that-never-runs-is-removed",
            findings=(Expected(4, 8, "`not torch.cuda.is_available()`"),),
        ),
        invalid(
            """
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"  # xla-codemod: ignore[XLA101]
            """,
            note="suppressed-device-keeps-its-check",
            findings=(Expected(3, 10, "the device is picked by an accelerator check, which is False on XLA; not"),),
        ),
        invalid(
            """
            import torch as th

            device = 'cuda' if th.cuda.is_available() else 'cpu'
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = 'xla'
            """,
            alias=True,
            findings=(Expected(4, 10, "device picked by an accelerator check, which is False on XLA"),),
        ),
        invalid(
            """
            import argparse

            import torch

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--no-cuda", action="store_true", default=False)
                args = parser.parse_args()
                args.cuda = not args.no_cuda and torch.cuda.is_available()
                return args
            """,
            """
            import argparse

            import torch

            def get_args():
                parser = argparse.ArgumentParser()
                parser.add_argument("--no-cuda", action="store_true", default=False)
                args = parser.parse_args()
                args.cuda = not args.no_cuda
                return args
            """,
            filename="arguments.py",
            note="a-cuda-flag-returned-for-other-modules",
            findings=(
                Expected(9, 17, "`args.cuda` picks the device in the modules that read it (`get_args()` returns it)"),
            ),
        ),
        invalid(
            """
            import torch as th

            def options(parser):
                opts = parser.parse_args()
                opts.use_gpu = th.cuda.is_available() and not opts.cpu
                return opts
            """,
            """
            import torch as th

            def options(parser):
                opts = parser.parse_args()
                opts.use_gpu = not opts.cpu
                return opts
            """,
            target="sagemaker",
            filename="config.py",
            note="a-gpu-flag-returned-for-other-modules-sagemaker",
            alias=True,
            findings=(
                Expected(5, 20, "`opts.use_gpu` picks the device in the modules that read it (`options()` returns it)"),
            ),
        ),
    ),
)
