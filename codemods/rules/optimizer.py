"""XLA2: optimizer steps and mixed precision."""

from __future__ import annotations

from codemods.rules.base import Example, Rule, example

RULES = (
    Rule(
        "XLA201", "optimizer-step", "error", "`optimizer.step()` becomes `xm.optimizer_step(optimizer)`", True,
        why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
        "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
        "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces.)",
        examples=(
            example(
                """
                import torch

                for data, target in loader:
                    loss = loss_fn(model(data), target)
                    loss.backward()
                    optimizer.step()
                """,
                """
                import torch
                import torch_xla
                import torch_xla.core.xla_model as xm

                for data, target in loader:
                    loss = loss_fn(model(data), target)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
                """,
            ),
        ),
    ),
    Rule(
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
    ),
    Rule(
        "XLA203", "optimizer-before-move", "error", "An optimizer built before its model moves to the XLA device gets the moved parameters", True,
        why="Moving a module to an XLA device replaces its Parameter objects (on CUDA they are kept), so an "
        "optimizer built from `model.parameters()` before the move updates stale CPU copies: the model silently "
        "trains nothing (with a gradient scaler: 'No inf checks were recorded for this optimizer'). The model is "
        "moved first, also when the later move is in another function or in a callable of another project file "
        "that the model is handed to (a trainer class), and when a function builds the optimizer from the model; "
        "where the later move may go to the CPU, an error names it.",
        examples=(
            example(
                """
                import torch

                device = torch.device("cuda")
                model = torch.nn.Linear(3, 1)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                model.to(device)
                """,
                """
                import torch
                import torch_xla

                device = torch_xla.device()
                model = torch.nn.Linear(3, 1)
                optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
                model.to(device)
                """,
            ),
        ),
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
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
    ),
    Rule(
        "XLA212", "fused-optimizer", "error", "`fused=True` on a torch.optim optimizer is removed: the fused kernels refuse XLA tensors", True,
        why="torch.optim's fused kernels take CUDA and CPU tensors only: on torch_xla 2.9 the first step raises "
        "`RuntimeError: fused=True requires all the params to be floating point Tensors of supported devices` "
        "(checked for SGD, Adam, AdamW; `foreach=True` and Adam's `capturable=True` run). Without it the optimizer "
        "computes the same update with its default implementation. A `fused=` value that is not a literal True "
        "is reported. (Under AMP the optimizer becomes sync-free and the keyword goes there: XLA206.)",
        examples=(
            example(
                """
                import torch

                optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
                """,
                """
                import torch

                optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
                """,
            ),
        ),
    ),
)
