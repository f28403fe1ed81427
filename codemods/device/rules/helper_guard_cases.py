"""XLA104's cases of an availability check around a call of a function of the file that moves to
CUDA (``if torch.cuda.is_available(): x = to_gpu(x)``, Palette's ``set_device``): the check picks
the device as if the move were written under it."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_DROPPED = (
    "`torch.cuda.is_available()`: the accelerator check holds for the XLA device, so the code under it always runs"
)


def helper_guard_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
        import torch

        def to_gpu(x):
            if x is None:
                return None
            return x.cuda()

        def set_device(x, rank=0):
            if torch.cuda.is_available():
                x = to_gpu(x)
            return x
        """,
            """
        import torch
        import torch_xla

        def to_gpu(x):
            if x is None:
                return None
            return x.to(torch_xla.device())

        def set_device(x, rank=0):
            x = to_gpu(x)
            return x
        """,
            note="a-helper-of-the-file-moves-under-the-check",
            findings=(Expected(10, 8, _DROPPED),),
        ),
        invalid(
            """
        from torch import cuda

        def to_gpu(x):
            return x.cuda(non_blocking=True)

        def set_device(x):
            if cuda.is_available():
                x = to_gpu(x)
            return x
        """,
            """
        import torch_xla

        def to_gpu(x):
            return x.to(torch_xla.device(), non_blocking=True)

        def set_device(x):
            x = to_gpu(x)
            return x
        """,
            note="a-helper-of-the-file-moves-under-the-check-from-import",
            alias=True,
            findings=(Expected(7, 8, "`cuda.is_available()`: the accelerator check holds for the XLA device"),),
        ),
        invalid(
            """
        import torch

        def to_gpu(x):
            print(torch.cuda.get_device_name())
            return x.cuda()

        def set_device(x):
            if torch.cuda.is_available():
                x = to_gpu(x)
            return x
        """,
            """
        import torch
        import torch_xla

        def to_gpu(x):
            print(torch.cuda.get_device_name())
            return x.to(torch_xla.device())

        def set_device(x):
            if torch.cuda.is_available():
                x = to_gpu(x)
            return x
        """,
            note="a-helper-that-moves-and-runs-cuda-only-code",
            findings=(
                Expected(
                    9,
                    8,
                    "`torch.cuda.is_available()` picks the device, and the code it guards also runs "
                    "`torch.cuda.get_device_name`, which fails without CUDA",
                ),
            ),
        ),
    )


def helper_guard_chain_cases() -> tuple[Invalid, ...]:
    """The check around several calls of a function that moves through another (Palette's
    ``set_device`` -> ``set_gpu`` -> ``.cuda()``)."""
    return (
        invalid(
            """
        import torch


        def to_gpu(x):
            return x.cuda()


        def place(x, distributed=False):
            if distributed:
                return torch.nn.parallel.DistributedDataParallel(to_gpu(x))
            return to_gpu(x)


        def set_device(args, distributed=False):
            if torch.cuda.is_available():
                if isinstance(args, list):
                    return [place(item, distributed) for item in args]
                elif isinstance(args, dict):
                    return {key: place(args[key], distributed) for key in args}
                args = place(args, distributed)
            return args
        """,
            """
        import torch
        import torch_xla


        def to_gpu(x):
            return x.to(torch_xla.device())


        def place(x, distributed=False):
            if distributed:
                return torch.nn.parallel.DistributedDataParallel(to_gpu(x))
            return to_gpu(x)


        def set_device(args, distributed=False):
            if isinstance(args, list):
                return [place(item, distributed) for item in args]
            elif isinstance(args, dict):
                return {key: place(args[key], distributed) for key in args}
            args = place(args, distributed)
            return args
        """,
            note="a-helper-of-the-file-moves-through-another-under-the-check",
            findings=(Expected(16, 8, _DROPPED),),
        ),
    )


def helper_guard_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            """
        import torch

        def log_batch(x):
            print(x.shape)

        def set_device(x):
            if torch.cuda.is_available():
                log_batch(x)
            return x
        """,
            note="a-helper-of-the-file-that-moves-nothing",
        ),
    )
