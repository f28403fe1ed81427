"""XLA210 autocast-device-type."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

AUTOCAST_DEVICE_TYPE = Rule(
    code="XLA210",
    name="autocast-device-type",
    severity="error",
    summary="A device type derived from the device string for autocast becomes 'xla'",
    fixable=True,
    why="`device_type = 'cuda' if 'cuda' in device else 'cpu'` gives 'cpu' for the XLA device, which switches "
    "autocast off (or onto the CPU) without a word.",
    examples=lambda: (
        Invalid(
            "import torch\ndevice_type = 'cuda' if 'cuda' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
            "import torch\ndevice_type = 'xla' if 'xla' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
            findings=(Expected(2, 15, "`device_type` chooses autocast's device type"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            device_type = 'cuda' if 'cuda' in device else 'cpu'
            print(device_type)
            """,
            note="not-for-autocast",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from contextlib import nullcontext

            device = 'cuda' if torch.cuda.is_available() else 'cpu'
            device_type = 'cuda' if 'cuda' in device else 'cpu'
            ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)
            from contextlib import nullcontext

            device = 'xla'
            device_type = 'xla' if 'xla' in device else 'cpu'
            ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            findings=(Expected(6, 15, "`device_type` chooses autocast's device type"),),
        ),
        invalid(
            """
            import torch as th

            amp_device = "cuda" if th.cuda.is_available() else "cpu"
            with th.autocast(amp_device, dtype=th.bfloat16):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            amp_device = "xla"
            with th.autocast(amp_device, dtype=th.bfloat16):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(4, 14, "`amp_device` chooses autocast's device type"),),
        ),
    ),
)
