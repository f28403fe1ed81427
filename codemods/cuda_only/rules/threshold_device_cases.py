"""XLA506's cases of a multi-GPU threshold that picks the device (``if torch.cuda.device_count() > 1:
device = "cuda:0" else: device = "cpu"``): 0 on an XLA host, so the CPU path runs there and the model
and tensors stay on the CPU (XLA101 ports the name on the path XLA never takes): an error at the
condition, on both targets, again on a second run (the ported name is the XLA device).  A threshold
whose paths both name a CUDA device, or that picks none (DataParallel), stays XLA511's note."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

PICKS = (
    "`torch.cuda.device_count()` is 0 on an XLA host (no CUDA device): `torch.cuda.device_count() > 1` is False "
    'there, so the device it picks (`device = "cuda:0"`) is not: the other path runs and the model and tensors stay '
    "on the CPU on XLA; make the path it takes there pick the XLA device"
)
THRESHOLD = """
    import torch

    if torch.cuda.device_count() > 1:
        device = "cuda:0"
    else:
        device = "cpu"
    model = torch.nn.Linear(4, 2).to(device)
"""
PORTED = """
    import torch
    import torch_xla  # noqa: F401  (registers the "xla" device)

    if torch.cuda.device_count() > 1:
        device = "xla"
    else:
        device = "cpu"
    model = torch.nn.Linear(4, 2).to(device)
"""


def threshold_device_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(THRESHOLD, PORTED, note="a-multi-gpu-threshold-picks-the-device", findings=(Expected(4, 4, PICKS),)),
        invalid(
            THRESHOLD,
            PORTED,
            target="sagemaker",
            note="a-multi-gpu-threshold-picks-the-device-sagemaker",
            findings=(Expected(4, 4, PICKS),),
        ),
        invalid(
            """
            import torch as th

            device = "cuda:0" if th.cuda.device_count() >= 2 else "cpu"
            model = th.nn.Linear(4, 2).to(device)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = "xla" if th.cuda.device_count() >= 2 else "cpu"
            model = th.nn.Linear(4, 2).to(device)
            """,
            alias=True,
            note="a-multi-gpu-threshold-picks-the-device-alias",
            findings=(
                Expected(
                    4,
                    19,
                    '`th.cuda.device_count() >= 2` is False there, so the device it picks (`"cuda:0"`) is not: the '
                    "other path runs and the model and tensors stay on the CPU on XLA",
                ),
            ),
        ),
        invalid(
            PORTED,
            None,
            note="a-multi-gpu-threshold-picks-the-device-second-run",
            findings=(
                Expected(
                    4, 4, '`torch.cuda.device_count() > 1` is False there, so the device it picks (`device = "xla"`)'
                ),
            ),
        ),
    )


def threshold_device_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            if torch.cuda.device_count() > 1:
                device = "xla"
            else:
                device = "xla"
            model = torch.nn.Linear(4, 2).to(device)
            """,
            note="a-multi-gpu-threshold-between-two-devices",
        ),
    )
