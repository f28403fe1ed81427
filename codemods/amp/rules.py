"""XLA202, XLA204-XLA211: mixed precision (autocast, gradient scalers, the optimizers under them)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

AUTOCAST = Rule(
    code="XLA202",
    name="autocast",
    severity="error",
    summary="CUDA autocast becomes XLA autocast (`torch.autocast('xla', dtype=torch.bfloat16)`; sagemaker: `torch_xla.amp.autocast()`, torch_xla 1.13's CUDA autocast)",
    fixable=True,
    why="CUDA autocast does nothing to XLA tensors: the model silently trains in float32, or, with a gradient "
    "scaler, with a scaler that was never meant for that precision.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast():\n    loss = model(x)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'with torch.autocast("xla", dtype=torch.bfloat16):\n    loss = model(x)\n',
            findings=(Expected(3, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            with torch.no_grad():
                out = model(x)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cpu-and-xla-autocast-stay",
        ),
        valid(
            """
            import torch

            ac = torch.autocast
            with ac("cpu", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cpu-autocast-through-a-name",
        ),
        valid(
            """
            import torch

            def entered(ctx):
                return isinstance(ctx, torch.autocast)
            """,
            note="type-check-is-no-use",
        ),
        valid(
            """
            import torch

            with torch.autocast("cpu", **kwargs):
                out = model(x)
            """,
            note="unpacked-cpu-autocast-stays",
        ),
    ),
    invalid=lambda: (
        # Stability-AI/generative-models' checkpointing: the backward pass re-enters the
        # forward's autocast with the keywords it recorded, unpacked.
        invalid(
            """
            import torch

            kwargs = {"enabled": True, "dtype": torch.get_autocast_gpu_dtype()}
            with torch.enable_grad(), torch.cuda.amp.autocast(**kwargs):
                out = model(x)
            with torch.autocast("cuda", **kwargs):
                out = model(x)
            """,
            """
            import torch

            kwargs = {"enabled": True, "dtype": torch.get_autocast_gpu_dtype()}
            with torch.enable_grad(), torch.cuda.amp.autocast(**kwargs):
                out = model(x)
            with torch.autocast("cuda", **kwargs):
                out = model(x)
            """,
            note="unpacked-arguments",
            findings=(
                Expected(
                    4,
                    27,
                    "`torch.cuda.amp.autocast` gets unpacked arguments, so it is not rewritten: as CUDA "
                    "autocast it is off on XLA and the code under it runs in float32",
                ),
                Expected(6, 6, "`torch.autocast` gets unpacked arguments, so it is not rewritten"),
            ),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast():
                out = model(x)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="cuda-amp-default-float16",
            findings=(Expected(4, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast(use_amp):
                out = model(x)
            with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                out = model(x)
            with torch.amp.autocast(device_type='cuda', enabled=args.amp):
                out = model(x)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
                out = model(x)
            with torch.autocast("xla", dtype=torch.bfloat16, cache_enabled=False):
                out = model(x)
            with torch.autocast('xla', dtype=torch.bfloat16, enabled=args.amp):
                out = model(x)
            """,
            note="positional-enabled-and-keywords",
            findings=(
                Expected(4, 6, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16,'),
                Expected(6, 6, 'torch.autocast -> torch.autocast("xla", dtype=torch.bfloat16, cache_enabled=False)'),
                Expected(8, 6, "torch.amp.autocast -> torch.autocast('xla', dtype=torch.bfloat16,"),
            ),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import autocast

            @autocast()
            def forward(x):
                return model(x)

            with autocast(), torch.no_grad():
                out = model(x)
            ctx = nullcontext() if args.cpu else autocast(enabled=True)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            @torch.autocast("xla", dtype=torch.bfloat16)
            def forward(x):
                return model(x)

            with torch.autocast("xla", dtype=torch.bfloat16), torch.no_grad():
                out = model(x)
            ctx = nullcontext() if args.cpu else torch.autocast("xla", dtype=torch.bfloat16, enabled=True)
            """,
            note="decorator-with-items-conditional",
            findings=(
                Expected(4, 2, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16) (float16,'),
                Expected(8, 6, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16) (float16,'),
                Expected(10, 38, 'autocast -> torch.autocast("xla", dtype=torch.bfloat16, enabled=True) (float16,'),
            ),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast(dtype=torch.float16):
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(dtype=torch.float16):
                out = model(x)
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
            findings=(Expected(4, 6, "torch.cuda.amp.autocast -> torch_xla.amp.autocast(dtype=torch.float16)"),),
        ),
        invalid(
            """
            import torch as th
            from torch.cuda.amp import autocast as ac

            with ac(enabled=True):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with th.autocast("xla", dtype=th.bfloat16, enabled=True):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(4, 6, 'ac -> th.autocast("xla", dtype=th.bfloat16, enabled=True) (float16,'),),
        ),
        invalid(
            """
            from contextlib import nullcontext

            import torch

            amp_ctx = torch.cuda.amp.autocast(dtype=torch.float16) if use_amp else nullcontext()
            with amp_ctx:
                out = model(x)
            """,
            """
            from contextlib import nullcontext

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            amp_ctx = torch.autocast("xla", dtype=torch.bfloat16) if use_amp else nullcontext()
            with amp_ctx:
                out = model(x)
            """,
            note="autocast-called-into-a-name",
            findings=(Expected(6, 11, 'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16)'),),
        ),
        invalid(
            """
            from contextlib import nullcontext

            import torch


            class Trainer:
                def __init__(self, use_amp):
                    self.autocast = torch.autocast if use_amp else nullcontext

                def step(self, x):
                    with self.autocast("cuda", dtype=torch.float16):
                        return self.model(x)
            """,
            """
            from contextlib import nullcontext

            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)


            class Trainer:
                def __init__(self, use_amp):
                    self.autocast = torch.autocast if use_amp else nullcontext

                def step(self, x):
                    with self.autocast("xla", dtype=torch.bfloat16):
                        return self.model(x)
            """,
            note="autocast-bound-to-a-name",
            findings=(
                Expected(
                    12,
                    14,
                    '`self.autocast` is torch.autocast: self.autocast("cuda", dtype=torch.float16) -> '
                    'self.autocast("xla", dtype=torch.bfloat16)',
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            ac = th.amp.autocast
            with ac(device_type="cuda"):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            ac = th.amp.autocast
            with ac(device_type="xla"):
                out = model(x)
            """,
            alias=True,
            note="autocast-bound-to-a-name-alias",
            findings=(Expected(5, 6, '`ac` is torch.autocast: ac(device_type="cuda") -> ac(device_type="xla")'),),
        ),
        invalid(
            """
            import torch

            ac = torch.autocast
            with ac("cuda", dtype=torch.float16):
                out = model(x)
            """,
            target="sagemaker",
            note="autocast-bound-to-a-name-sagemaker",
            findings=(
                Expected(
                    4,
                    6,
                    "`ac` is torch.autocast, called here: the torch of torch_xla 1.13 takes no 'xla' "
                    "autocast device type",
                ),
            ),
        ),
        invalid(
            """
            from contextlib import nullcontext
            import functools

            import torch


            def step(model, x, use_amp):
                autocast = torch.cuda.amp.autocast if use_amp else nullcontext
                with autocast():
                    out = model(x)
                half = functools.partial(torch.autocast, "cuda")
                with half():
                    return model(out)
            """,
            note="autocast-handed-on-uncalled",
            findings=(
                Expected(8, 16, "`torch.cuda.amp.autocast` is handed on uncalled: it has no device argument to change"),
                Expected(11, 30, "`torch.autocast` is handed on uncalled: its device type is given where it is called"),
            ),
        ),
    ),
)

FLOAT16_AUTOCAST = Rule(
    code="XLA204",
    name="float16-autocast",
    severity="warning",
    summary="float16 autocast on XLA becomes bfloat16 (2.9 target)",
    fixable=True,
    why="XLA devices compute in bfloat16: TPUs do not support float16 autocast, and bfloat16 needs no loss scaling.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.float16):\n    loss = model(x)\n",
            "import torch\nwith torch.autocast(device_type=device_type, dtype=torch.bfloat16):\n    loss = model(x)\n",
            findings=(Expected(2, 52, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=ptdtype)
            """,
            note="dtype-variable",
        ),
        valid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch
            import torch_xla.amp

            ctx = torch_xla.amp.autocast(dtype=torch.float16)
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
            """,
            """
            import torch

            ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)
            """,
            findings=(Expected(3, 53, "autocast dtype torch.float16 -> torch.bfloat16"),),
        ),
        invalid(
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.half)
            """,
            """
            import torch as th

            ctx = th.amp.autocast(device_type=device_type, dtype=th.bfloat16)
            """,
            alias=True,
            findings=(Expected(3, 54, "autocast dtype th.half -> th.bfloat16"),),
        ),
    ),
)

GRAD_SCALER = Rule(
    code="XLA205",
    name="grad-scaler",
    severity="error",
    summary="The CUDA gradient scaler becomes the target's (`torch.amp.GradScaler('xla')`; sagemaker: `torch_xla.amp.GradScaler()`)",
    fixable=True,
    why="torch.cuda.amp.GradScaler disables itself without CUDA (with a warning only): float16 training then "
    "runs without loss scaling and silently underflows.",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'scaler = torch.amp.GradScaler("xla", enabled=use_amp)\n',
            findings=(Expected(3, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", enabled=use_amp)'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler(init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("cuda")
            third = torch.amp.GradScaler(device="cuda", growth_interval=100)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla", init_scale=2.**10, enabled=use_amp)
            other = torch.amp.GradScaler("xla")
            third = torch.amp.GradScaler("xla", growth_interval=100)
            """,
            findings=(
                Expected(4, 10, 'torch.cuda.amp.GradScaler -> torch.amp.GradScaler("xla", init_scale=2.**10,'),
                Expected(5, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla")'),
                Expected(6, 9, 'torch.amp.GradScaler -> torch.amp.GradScaler("xla", growth_interval=100)'),
            ),
        ),
        invalid(
            """
            import torch

            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler(enabled=use_amp)
            """,
            target="sagemaker",
            note="sagemaker",
            findings=(Expected(4, 10, "torch.amp.GradScaler -> torch_xla.amp.GradScaler(enabled=use_amp)"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import GradScaler as GS

            scaler = GS()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = torch.amp.GradScaler("xla")
            """,
            alias=True,
            findings=(Expected(4, 10, 'GS -> torch.amp.GradScaler("xla")'),),
        ),
        invalid(
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler(init_scale=2.0**10)
            """,
            """
            import torch
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
            import torch_xla  # noqa: F401  (registers the "xla" device)

            scaler = ShardedGradScaler("xla", init_scale=2.0**10)
            """,
            note="sharded",
            findings=(
                Expected(
                    5, 10, 'ShardedGradScaler(init_scale=2.0**10) -> ShardedGradScaler("xla", init_scale=2.0**10)'
                ),
            ),
        ),
        invalid(
            """
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
            """,
            target="sagemaker",
            note="sharded-sagemaker",
            findings=(Expected(3, 10, "`ShardedGradScaler` shards with torch's FSDP"),),
        ),
    ),
)

SYNCFREE_OPTIMIZER = Rule(
    code="XLA206",
    name="syncfree-optimizer",
    severity="warning",
    summary="Under AMP, torch.optim SGD/Adam/AdamW become `torch_xla.amp.syncfree` versions",
    fixable=True,
    why="The sync-free optimizers take the scaler's found_inf as a device tensor, so under torch_xla 1.13's "
    "`torch_xla.amp.GradScaler` (sagemaker target) skipping a step does not stop the device to read a flag on "
    "the host (the AWS guide's advice for AMP on XLA). On torch_xla 2.9 they are not sync-free under the scaler: "
    "`torch.amp.GradScaler` hands found_inf only to optimizers that declare `_step_supports_amp_scaling`, which "
    "they do not, so it reads found_inf on the host at each step (`.item()`); they still step like torch.optim's "
    "there, and the finding says so. With bfloat16 autocast drop the scaler instead (XLA208).",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)\n",
            'import torch\nimport torch_xla.amp.syncfree as syncfree\nscaler = torch.amp.GradScaler("xla")\n'
            "optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)\n",
            findings=(Expected(4, 13, "torch.optim.AdamW -> syncfree.AdamW"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            """,
            note="no-amp",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
            """,
            """
            import torch
            import torch_xla.amp.syncfree as syncfree

            scaler = torch.amp.GradScaler("xla")
            optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)
            """,
            findings=(Expected(5, 13, "torch.optim.AdamW -> syncfree.AdamW"),),
        ),
        invalid(
            """
            import torch
            from torch.optim import SGD
            from torch import optim as O

            class Net(torch.nn.Module):
                def configure_optimizers(self):
                    return O.Adam(self.parameters()), SGD(self.parameters(), lr=0.1)

            with torch.cuda.amp.autocast():
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp.syncfree as syncfree

            class Net(torch.nn.Module):
                def configure_optimizers(self):
                    return syncfree.Adam(self.parameters()), syncfree.SGD(self.parameters(), lr=0.1)

            with torch.autocast("xla", dtype=torch.bfloat16):
                out = model(x)
            """,
            alias=True,
            findings=(Expected(6, 16, "O.Adam -> syncfree.Adam"), Expected(6, 50, "SGD -> syncfree.SGD")),
        ),
    ),
)

AMP_OPTIMIZER = Rule(
    code="XLA207",
    name="amp-optimizer",
    severity="warning",
    summary="An optimizer under AMP that cannot become sync-free (no such version, or unpacked kernel keywords)",
    fixable=False,
    why="Under torch_xla 1.13's gradient scaler (sagemaker target), an optimizer without a sync-free version makes "
    "every step wait for the device to report whether gradients overflowed. On torch_xla 2.9 the scaler reads "
    "that on the host whatever the optimizer, so a missing sync-free version costs nothing more there (XLA208 "
    "reports the scaler); unpacked keywords are reported on both targets.",
    examples=lambda: (
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler()\noptimizer = torch.optim.RMSprop(model.parameters())\n",
            "import torch\nimport torch_xla.amp\nscaler = torch_xla.amp.GradScaler()\n"
            "optimizer = torch.optim.RMSprop(model.parameters())\n",
            target="sagemaker",
            findings=(Expected(4, 13, "`RMSprop` has no sync-free version"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            optimizer = torch.optim.RMSprop(model.parameters())
            """,
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.cuda.amp.GradScaler(enabled=False)
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla", enabled=False)
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            note="2.9-scaler-syncs-whatever-the-optimizer",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler()
            optimizer = torch.optim.RMSprop(model.parameters())
            """,
            target="sagemaker",
            findings=(Expected(5, 13, "`RMSprop` has no sync-free version"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch.optim as O

            scaler = torch.cuda.amp.GradScaler(enabled=False)
            optimizer = O.AdamW(groups, **extra_args)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.amp.syncfree as syncfree

            scaler = torch.amp.GradScaler("xla", enabled=False)
            optimizer = syncfree.AdamW(groups, **extra_args)
            """,
            note="unpacked-kwargs",
            alias=True,
            findings=(Expected(6, 13, "`O.AdamW` gets unpacked keywords"),),
        ),
    ),
)

SCALER_NOT_NEEDED = Rule(
    code="XLA208",
    name="scaler-not-needed",
    severity="warning",
    summary="With bfloat16 autocast the gradient scaler is not needed (it syncs with the host every step)",
    fixable=False,
    why="Loss scaling exists for float16's narrow range (float16 needs it to train correctly); bfloat16 has "
    "float32's range. On torch_xla 2.9 `torch.amp.GradScaler('xla')` reads found_inf on the host at every "
    "`scaler.step`, with the sync-free optimizers too: measured with `xla-codemod doctor` on the converted "
    "fixtures/amp_recipe.py, one more graph run and one more transfer to the host per step (2 and 2 per step, "
    "against 1 and 1 with `enabled=False`). Reported on the converted script as well (lint), until the scaler is "
    "removed or disabled. Not on the sagemaker target, which keeps the script's float16.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\nscaler = torch.cuda.amp.GradScaler()\n",
            'import torch\nimport torch_xla\nscaler = torch.amp.GradScaler("xla")\n',
            findings=(Expected(3, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
            """,
            """
            import torch
            import torch_xla

            dtype = 'bfloat16'
            scaler = torch.amp.GradScaler("xla", enabled=(dtype == 'float16'))
            """,
            note="enabled-for-float16-only",
        ),
        valid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla.amp

            scaler = torch_xla.amp.GradScaler()
            """,
            target="sagemaker",
            note="sagemaker-float16",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla", enabled=amp_dtype == torch.float16)
            off = torch.amp.GradScaler("xla", enabled=False)
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-scaler-enabled-for-float16-only-or-off",
        ),
        valid(
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.float16):
                loss = model(x)
            """,
            note="float16-on-xla-needs-its-scaler",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import torch_xla

            scaler = torch.cuda.amp.GradScaler()
            """,
            """
            import torch
            import torch_xla

            scaler = torch.amp.GradScaler("xla")
            """,
            findings=(Expected(4, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('cuda')
            """,
            """
            import torch
            import torch_xla
            from torch.amp import GradScaler

            scaler = GradScaler('xla')
            """,
            alias=True,
            findings=(Expected(5, 10, "with bfloat16 autocast the gradient scaler is not needed, and its step reads"),),
        ),
        invalid(
            """
            import torch
            import torch_xla
            import torch_xla.amp.syncfree as syncfree

            optimizer = syncfree.AdamW(model.parameters())
            scaler = torch.amp.GradScaler("xla")
            with torch.autocast("xla", dtype=torch.bfloat16):
                loss = model(x)
            """,
            note="converted-script-still-reported",
            findings=(
                Expected(
                    6,
                    10,
                    "with bfloat16 autocast the gradient scaler is not needed, and its step reads found_inf "
                    "on the host every iteration (on torch_xla 2.9, with the sync-free optimizers too: one more "
                    "graph run and a transfer to the host per step)",
                ),
            ),
        ),
    ),
)

PRECISION_CHOICE = Rule(
    code="XLA209",
    name="precision-choice",
    severity="error",
    summary="A precision chosen by CUDA checks (`is_bf16_supported()`) becomes bfloat16 on XLA (2.9 target)",
    fixable=True,
    why="torch.cuda checks are False on an XLA machine, so a script that picks bfloat16 on a modern GPU would "
    "silently fall back to float16 (and switch its gradient scaler on).",
    examples=lambda: (
        Invalid(
            "import torch\ndtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'\n",
            "import torch\ndtype = 'bfloat16'\n",
            findings=(Expected(2, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            """,
            target="sagemaker",
            note="sagemaker-keeps-precision",
        ),
        valid(
            """
            import torch

            dtype = 'bfloat16' if args.bf16 else 'float16'
            """,
            note="no-cuda-check",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            """
            import torch

            dtype = 'bfloat16'
            ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
            """,
            findings=(Expected(3, 9, "`dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
        invalid(
            """
            from torch.cuda import is_bf16_supported
            import torch as th

            amp_dtype = th.bfloat16 if is_bf16_supported() else th.float16
            """,
            """
            import torch as th

            amp_dtype = th.bfloat16
            """,
            alias=True,
            findings=(Expected(3, 13, "`amp_dtype` chooses the precision by CUDA checks (False on XLA)"),),
        ),
    ),
)

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

CUSTOM_AUTOGRAD_AMP = Rule(
    code="XLA211",
    name="custom-autograd-amp",
    severity="error",
    summary="`torch.cuda.amp.custom_fwd/custom_bwd` become the XLA ones",
    fixable=True,
    why="The CUDA decorators look at CUDA's autocast state, so under XLA autocast a custom function gets "
    "inputs of the wrong precision.",
    examples=lambda: (
        Invalid(
            "import torch\n@torch.cuda.amp.custom_fwd\ndef forward(ctx, x):\n    return x\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            '@torch.amp.custom_fwd(device_type="xla")\ndef forward(ctx, x):\n    return x\n',
            findings=(Expected(3, 2, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla")'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            @torch.amp.custom_fwd(device_type="xla")
            def forward(ctx, x):
                return x
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            class F(torch.autograd.Function):
                @staticmethod
                @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.cuda.amp.custom_bwd
                def backward(ctx, g):
                    return g
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            class F(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="xla")
                def backward(ctx, g):
                    return g
            """,
            findings=(
                Expected(6, 6, 'torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type="xla",'),
                Expected(11, 6, 'torch.cuda.amp.custom_bwd -> torch.amp.custom_bwd(device_type="xla")'),
            ),
        ),
        invalid(
            """
            import torch
            from torch.cuda.amp import custom_fwd as cf

            @cf
            def forward(ctx, x):
                return x
            """,
            """
            import torch
            import torch_xla.amp

            @torch_xla.amp.custom_fwd
            def forward(ctx, x):
                return x
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(4, 2, "cf -> torch_xla.amp.custom_fwd"),),
        ),
    ),
)

RULES = (
    AUTOCAST,
    FLOAT16_AUTOCAST,
    GRAD_SCALER,
    SYNCFREE_OPTIMIZER,
    AMP_OPTIMIZER,
    SCALER_NOT_NEEDED,
    PRECISION_CHOICE,
    AUTOCAST_DEVICE_TYPE,
    CUSTOM_AUTOGRAD_AMP,
)
