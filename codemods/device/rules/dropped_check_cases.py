"""XLA104's cases of a check that is dropped or folded where it picks the device: a check that
stops the script without CUDA, an exit under a function that counts CUDA devices, an ``if``
unwrapped with its comments, ``torch.accelerator`` and ``torch.cuda.is_initialized()``; and of
the branches and flags that go with it (an ``elif``, a branch that never runs on XLA, a flag
returned for other modules).  Apart from the rule module because the cases are its bulk."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def dropped_check_cases() -> tuple[Invalid, ...]:
    return (
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
    )


def dropped_branch_and_flag_cases() -> tuple[Invalid, ...]:
    return (
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
    )
