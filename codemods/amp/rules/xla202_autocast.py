"""XLA202 autocast."""

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
