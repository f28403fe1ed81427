"""XLA506's cases for CUDA code that never runs on an XLA host: under an availability check, in the
recovery branch of a caught error whose text is tested for CUDA's out-of-memory message (an XLA
host's is RESOURCE_EXHAUSTED), and a checkpoint's CUDA load under a kept availability
check whose ``else`` loads on the CPU (the device facts' ``false_on_xla``, ``location_moves``); kept
apart from the rule so that its module holds the rule, its messages and its hooks."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_OOM_RECOVERY = """
    import torch


    def step(model, batch, device):
        try:
            return model(batch)
        except RuntimeError as e:
            if "CUDA out of memory" in str(e):
                with torch.cuda.device(device):
                    print(torch.cuda.memory_summary())
            raise
    """

_RESUME = """
    import torch


    def resume(model, filename):
        if torch.cuda.is_available():
            device_id = torch.cuda.current_device()
            checkpoint = torch.load(filename, map_location=lambda storage, loc: storage.cuda(device_id))
        else:
            checkpoint = torch.load(filename, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"])
    """


def off_xla_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            if torch.cuda.is_available():
                start = torch.cuda.Event(enable_timing=True)
            """,
            note="under-cuda-check",
        ),
        valid(_OOM_RECOVERY, note="under a test of a caught error for CUDA's out-of-memory message: never runs on XLA"),
        valid(
            substituted(_OOM_RECOVERY, ('"CUDA out of memory" in str(e)', '"cuda out of memory" in str(e).lower()')),
            target="sagemaker",
            note="the same, the message lowered (sagemaker)",
        ),
        valid(
            _RESUME,
            note="a current device read under an availability check that stays (its else loads on the CPU): never "
            "runs on XLA",
        ),
        valid(_RESUME, target="sagemaker", note="the same (sagemaker)"),
    )


def off_xla_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            substituted(_OOM_RECOVERY, ('"CUDA out of memory" in str(e)', '"out of memory" in str(e)')),
            note="a test for any out-of-memory message: true on XLA too",
            findings=(
                Expected(9, 18, "`torch.cuda.device` is CUDA-only"),
                Expected(10, 23, "`torch.cuda.memory_summary`"),
            ),
        ),
        invalid(
            substituted(_OOM_RECOVERY, ('"CUDA out of memory" in str(e)', '"CUDA out of memory" not in str(e)')),
            target="sagemaker",
            note="a negated test for CUDA's message: true on XLA (sagemaker)",
            findings=(
                Expected(9, 18, "`torch.cuda.device` is CUDA-only"),
                Expected(10, 23, "`torch.cuda.memory_summary`"),
            ),
        ),
    )
