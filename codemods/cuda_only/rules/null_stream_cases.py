"""Cases of ``torch.cuda.stream`` given the null stream (null_streams.py): XLA502 reports it as having
no effect, XLA506 not as CUDA-only; a stream the file made (or was handed) stays XLA506's, and so
does the ``torch.cuda.Stream()`` of ``torch.cuda.stream(torch.cuda.Stream() if ... else None)``."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

NULL = """
import torch


def metrics(loss_dict):
    with torch.cuda.stream(None):
        return {k: v.detach().cpu().item() for k, v in loss_dict.items()}
"""

# detectron2's SimpleTrainer._write_metrics: a side stream on CUDA, the null stream elsewhere.
CHOSEN = """
import torch


def metrics(loss_dict):
    device = next(iter(loss_dict.values())).device
    with torch.cuda.stream(torch.cuda.Stream() if device.type == "cuda" else None):
        return {k: v.detach().cpu().item() for k, v in loss_dict.items()}
"""

HANDED = """
import torch


def copy(x, stream):
    with torch.cuda.stream(stream):
        return x * 2
"""


def null_stream_no_effect_valid() -> tuple[Valid, ...]:
    """XLA502's: a stream handed in is not the null stream."""
    return (valid(HANDED, note="a-stream-handed-in-is-not-the-null-stream"),)


def null_stream_no_effect_invalid() -> tuple[Invalid, ...]:
    """XLA502's: the null stream, given or chosen where the CUDA stream is not made."""
    return (
        invalid(
            NULL,
            note="the-null-stream",
            findings=(Expected(5, 10, "`torch.cuda.stream` is given None: the null stream"),),
        ),
        invalid(
            CHOSEN,
            note="the-null-stream-where-the-cuda-stream-is-not-made",
            findings=(Expected(6, 10, "is given None where the CUDA stream is not made: the null stream"),),
        ),
    )


def null_stream_cuda_api_valid() -> tuple[Valid, ...]:
    """XLA506's: the null stream runs without CUDA."""
    return (valid(NULL, note="the-null-stream-runs-without-cuda"),)


def null_stream_cuda_api_invalid() -> tuple[Invalid, ...]:
    """XLA506's: a stream handed in, and the CUDA stream made beside the null one."""
    return (
        invalid(
            HANDED,
            note="a-stream-handed-in",
            findings=(Expected(5, 10, "`torch.cuda.stream` is CUDA-only and raises without CUDA"),),
        ),
        invalid(
            CHOSEN,
            note="the-cuda-stream-made-beside-the-null-one",
            findings=(Expected(6, 28, "`torch.cuda.Stream` is CUDA-only and raises without CUDA"),),
        ),
    )
