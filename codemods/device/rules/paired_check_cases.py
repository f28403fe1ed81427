"""XLA104's cases of two availability checks that must be ported together: CUDA-event timing
around a step (the second check's synchronize reads the events only the first binds) and a check
whose code reads a name that only a check kept for a CUDA-only call binds.  They are XLA104's own
(xla104_cuda_available_device.py lists them); kept here, that rule module stays under the size limit."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_TIMED_STEP = """
    import time
    import torch

    for x in loader:
        if torch.cuda.is_available():
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            start = time.time()
        step(x)
        if torch.cuda.is_available():
            end.record()
            torch.cuda.synchronize()
            took = start.elapsed_time(end) / 1000
        else:
            took = time.time() - start
    """


def paired_check_valid_cases() -> tuple[Valid, ...]:
    """Timing checks that stay together, their synchronize ported."""
    return (
        # CUDA-event timing before and after a step: the second check (a synchronize) stays with the first;
        # dropped alone, its code would read `end`, which only the first check's code binds.
        valid(
            _TIMED_STEP,
            substituted(
                _TIMED_STEP,
                ("import torch\n", "import torch\n    import torch_xla.core.xla_model as xm\n"),
                ("torch.cuda.synchronize()", "xm.wait_device_ops()"),
            ),
            note="cuda-event-timing-pair-stays",
        ),
        valid(
            substituted(_TIMED_STEP, ("import torch\n", "import torch as th\n"), ("torch.cuda", "th.cuda")),
            substituted(
                _TIMED_STEP,
                ("import torch\n", "import torch as th\n    import torch_xla.core.xla_model as xm\n"),
                ("torch.cuda.synchronize()", "xm.wait_device_ops()"),
                ("torch.cuda", "th.cuda"),
            ),
            target="sagemaker",
            note="cuda-event-timing-pair-stays-alias-sagemaker",
        ),
    )


def paired_check_invalid_cases() -> tuple[Invalid, ...]:
    """A check that stays with the kept check whose code binds what it reads."""
    return (
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                model.cuda()
                name = torch.cuda.get_device_name()
            if torch.cuda.is_available():
                model.cuda()
                print(name)
            """,
            """
            import torch
            import torch_xla

            if torch.cuda.is_available():
                model.to(torch_xla.device())
                name = torch.cuda.get_device_name()
            if torch.cuda.is_available():
                model.to(torch_xla.device())
                print(name)
            """,
            note="paired-check-stays-with-its-partner",
            findings=(
                Expected(4, 4, "the code it guards also runs `torch.cuda.get_device_name`"),
                Expected(7, 4, "reads `name`, which only the code of another check that stays binds"),
            ),
        ),
    )
