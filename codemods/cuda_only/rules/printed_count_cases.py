"""Cases of a CUDA device count in arithmetic with other values that only a print or a log line
shows (``logger.info("... {}".format(batch * torch.cuda.device_count()))``, Restormer's train.py):
nothing changes on XLA (XLA511's note); a division by it in the line still raises there (XLA506)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

PRINTED = """
import logging

import torch

logger = logging.getLogger(__name__)


def announce(batch_size, patch):
    logger.info("Batch_Size to {}".format(batch_size * torch.cuda.device_count()))
    print(f"patch {patch}, total {batch_size * torch.cuda.device_count()}")
"""


def printed_count_no_effect_invalid() -> tuple[Invalid, ...]:
    """XLA511's: the product only shows in the line."""
    return (
        invalid(
            PRINTED,
            note="a-count-times-a-batch-size-only-printed",
            findings=(
                Expected(9, 56, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),
                Expected(10, 48, "`torch.cuda.device_count()` is only printed; nothing changes on XLA"),
            ),
        ),
    )


def printed_count_cuda_api_invalid() -> tuple[Invalid, ...]:
    """XLA506's: a division by the count raises before the line is printed; a product that is kept is used."""
    return (
        invalid(
            """
            import torch


            def announce(batch_size):
                print("per device", batch_size / torch.cuda.device_count())
                return batch_size * torch.cuda.device_count()
            """,
            note="a-division-by-the-count-in-a-print-and-a-product-returned",
            findings=(
                Expected(5, 38, "`batch_size / torch.cuda.device_count()` computes with 0"),
                Expected(6, 25, "`batch_size * torch.cuda.device_count()` computes with 0"),
            ),
        ),
    )
