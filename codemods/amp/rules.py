"""XLA202, XLA204-XLA211: mixed precision (autocast, gradient scalers, the optimizers under them)."""

from __future__ import annotations

from codemods.engine.rule import Example, Rule

AUTOCAST = Rule(
    "XLA202",
    "autocast",
    "error",
    "CUDA autocast becomes XLA autocast (`torch.autocast('xla', dtype=torch.bfloat16)`; sagemaker: `torch_xla.amp.autocast(device)`)",
    True,
    why="CUDA autocast does nothing to XLA tensors: the model silently trains in float32, or, with a gradient "
    "scaler, with a scaler that was never meant for that precision.",
    examples=(
        Example(
            "import torch\nwith torch.cuda.amp.autocast():\n    loss = model(x)\n",
            "import torch\nimport torch_xla  # noqa: F401  (registers the \"xla\" device)\n"
            "with torch.autocast(\"xla\", dtype=torch.bfloat16):\n    loss = model(x)\n",
        ),
    ),
)

FLOAT16_AUTOCAST = Rule(
    "XLA204",
    "float16-autocast",
    "warning",
    "float16 autocast on XLA becomes bfloat16 (2.9 target)",
    True,
    why="XLA devices compute in bfloat16: TPUs do not support float16 autocast, and bfloat16 needs no loss scaling.",
    examples=(
        Example(
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.float16):\n    loss = model(x)\n",
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.bfloat16):\n    loss = model(x)\n",
        ),
    ),
)

GRAD_SCALER = Rule(
    "XLA205",
    "grad-scaler",
    "error",
    "The CUDA gradient scaler becomes the target's (`torch.amp.GradScaler('xla')`; sagemaker: `torch_xla.amp.GradScaler()`)",
    True,
    why="torch.cuda.amp.GradScaler disables itself without CUDA (with a warning only): float16 training then "
    "runs without loss scaling and silently underflows.",
    examples=(
        Example(
            "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n",
            "import torch\nimport torch_xla  # noqa: F401  (registers the \"xla\" device)\n"
            "scaler = torch.amp.GradScaler(\"xla\", enabled=use_amp)\n",
        ),
    ),
)

SYNCFREE_OPTIMIZER = Rule(
    "XLA206",
    "syncfree-optimizer",
    "warning",
    "Under AMP, torch.optim SGD/Adam/AdamW become `torch_xla.amp.syncfree` versions",
    True,
    why="The sync-free optimizers take the scaler's found_inf as a device tensor, so skipping a step does not "
    "stop the device to read a flag on the host (the seed's advice for AMP on XLA).",
    examples=(
        Example(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)\n",
            "import torch\nimport torch_xla.amp.syncfree as syncfree\nscaler = torch.amp.GradScaler(\"xla\")\n"
            "optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)\n",
        ),
    ),
)

AMP_OPTIMIZER = Rule(
    "XLA207",
    "amp-optimizer",
    "warning",
    "An optimizer under AMP that cannot become sync-free (no such version, or unpacked kernel keywords)",
    False,
    why="Under a gradient scaler, an optimizer without a sync-free version makes every step wait for the "
    "device to report whether gradients overflowed.",
    examples=(
        Example(
            "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler(enabled=False)\n"
            "optimizer = torch.optim.RMSprop(model.parameters())\n",
            "import torch\nimport torch_xla\nscaler = torch.amp.GradScaler(\"xla\", enabled=False)\n"
            "optimizer = torch.optim.RMSprop(model.parameters())\n",
        ),
    ),
)

SCALER_NOT_NEEDED = Rule(
    "XLA208",
    "scaler-not-needed",
    "warning",
    "With bfloat16 autocast the gradient scaler is not needed (it syncs with the host every step)",
    False,
    why="Loss scaling exists for float16's narrow range; bfloat16 has float32's range. The scaler still reads "
    "found_inf on the host at every step, which stalls the XLA pipeline.",
    examples=(
        Example(
            "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n",
            "import torch\nimport torch_xla\nscaler = torch.amp.GradScaler(\"xla\")\n",
        ),
    ),
)

PRECISION_CHOICE = Rule(
    "XLA209",
    "precision-choice",
    "error",
    "A precision chosen by CUDA checks (`is_bf16_supported()`) becomes bfloat16 on XLA (2.9 target)",
    True,
    why="torch.cuda checks are False on an XLA machine, so a script that picks bfloat16 on a modern GPU would "
    "silently fall back to float16 (and switch its gradient scaler on).",
    examples=(
        Example(
            "import torch\ndtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
            "import torch\ndtype = 'bfloat16'\n",
        ),
    ),
)

AUTOCAST_DEVICE_TYPE = Rule(
    "XLA210",
    "autocast-device-type",
    "error",
    "A device type derived from the device string for autocast becomes 'xla'",
    True,
    why="`device_type = 'cuda' if 'cuda' in device else 'cpu'` gives 'cpu' for the XLA device, which switches "
    "autocast off (or onto the CPU) without a word.",
    examples=(
        Example(
            "import torch\ndevice_type = 'cuda' if 'cuda' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
            "import torch\ndevice_type = 'xla' if 'xla' in device else 'cpu'\n"
            "ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)\n",
        ),
    ),
)

CUSTOM_AUTOGRAD_AMP = Rule(
    "XLA211",
    "custom-autograd-amp",
    "error",
    "`torch.cuda.amp.custom_fwd/custom_bwd` become the XLA ones",
    True,
    why="The CUDA decorators look at CUDA's autocast state, so under XLA autocast a custom function gets "
    "inputs of the wrong precision.",
    examples=(
        Example(
            "import torch\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n",
            "import torch\nimport torch_xla  # noqa: F401  (registers the \"xla\" device)\n"
            "@torch.amp.custom_fwd(device_type=\"xla\")\ndef forward(ctx, x):\n    return x\n",
        ),
    ),
)

RULES = (AUTOCAST, FLOAT16_AUTOCAST, GRAD_SCALER, SYNCFREE_OPTIMIZER, AMP_OPTIMIZER, SCALER_NOT_NEEDED, PRECISION_CHOICE, AUTOCAST_DEVICE_TYPE, CUSTOM_AUTOGRAD_AMP)
