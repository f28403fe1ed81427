"""XLA104's cases of an accelerator check whose branches assign a device string
(``if torch.cuda.is_available(): device_type = "cuda"``, then ``elif``/``else``) that later
reaches a device position: the check goes, and a later membership assert lists "xla" (XLA114)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def device_string_chain_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            def autodetect_device_type():
                if torch.cuda.is_available():
                    device_type = "cuda"
                elif torch.backends.mps.is_available():
                    device_type = "mps"
                else:
                    device_type = "cpu"
                return device_type

            def compute_init(device_type):
                assert device_type in ["cuda", "mps", "cpu"], "Invalid device type"
                return torch.device(device_type)

            device = compute_init(autodetect_device_type())
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def autodetect_device_type():
                device_type = "xla"
                return device_type

            def compute_init(device_type):
                assert device_type in ["cuda", "mps", "cpu", "xla"], "Invalid device type"
                return torch.device(device_type)

            device = compute_init(autodetect_device_type())
            """,
            note="a-device-string-chosen-in-an-elif-chain",
            findings=(
                Expected(
                    5,
                    8,
                    "`torch.cuda.is_available()`: the accelerator check holds for the XLA device, "
                    "so the code under it always runs: check dropped",
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            def autodetect_device_type():
                if th.cuda.is_available():
                    device_type = "cuda"
                elif th.backends.mps.is_available():
                    device_type = "mps"
                else:
                    device_type = "cpu"
                return device_type

            def compute_init(device_type):
                assert device_type in ("cuda", "mps", "cpu")
                return th.device(device_type)

            device = compute_init(autodetect_device_type())
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def autodetect_device_type():
                device_type = "xla"
                return device_type

            def compute_init(device_type):
                assert device_type in ("cuda", "mps", "cpu", "xla")
                return th.device(device_type)

            device = compute_init(autodetect_device_type())
            """,
            target="sagemaker",
            alias=True,
            note="a-device-string-chosen-in-an-elif-chain-sagemaker",
            findings=(Expected(5, 8, "`th.cuda.is_available()`: the accelerator check holds for the XLA device"),),
        ),
    )
