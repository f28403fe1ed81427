"""XLA214 disabled-autocast: a CUDA autocast called with ``enabled=False`` (a literal) turns
autocast off, so on XLA it changes nothing on its own: the code under it runs in float32
either way.  XLA202's hook still writes it as the target's XLA autocast, off, so that it also
turns off an XLA autocast around it (a region the script keeps in float32), and reports it
under this code, at info severity, without XLA202's precision note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.amp.facts import AutocastCall

DISABLED_AUTOCAST = Rule(
    code="XLA214",
    name="disabled-autocast",
    severity="info",
    summary="CUDA autocast with `enabled=False` becomes XLA autocast, off (no effect on its own)",
    fixable=True,
    why="A CUDA autocast that is turned off runs the code under it in float32, as XLA does without autocast: "
    "nothing changes on its own. Written as XLA autocast, off, it also turns off an XLA autocast around it, "
    "as the script meant.",
    examples=lambda: (
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(enabled=False):\n    loss = model(x)\n",
            'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'
            'with torch.autocast("xla", dtype=torch.bfloat16, enabled=False):\n    loss = model(x)\n',
            findings=(
                Expected(
                    3,
                    6,
                    'torch.cuda.amp.autocast -> torch.autocast("xla", dtype=torch.bfloat16, enabled=False) '
                    "(autocast off: float32 as before",
                ),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            with torch.autocast("xla", enabled=False):
                out = model(x)
            """,
            note="xla-autocast-off-stays",
            target_only=True,
        ),
        valid(
            """
            import torch

            with torch.autocast("cpu", enabled=False):
                out = model(x)
            """,
            note="cpu-autocast-off-stays",
        ),
    ),
    invalid=lambda: (
        # minDALL-E's stage-1 encoder under the model's forward: CUDA autocast, off.
        invalid(
            """
            import torch
            from torch.cuda.amp import autocast

            with torch.no_grad():
                with autocast(enabled=False):
                    codes = encoder(images)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with torch.no_grad():
                with torch.autocast("xla", dtype=torch.bfloat16, enabled=False):
                    codes = encoder(images)
            """,
            note="cuda-autocast-off",
            findings=(
                Expected(
                    5,
                    10,
                    'autocast -> torch.autocast("xla", dtype=torch.bfloat16, enabled=False) (autocast off: '
                    "float32 as before; as XLA autocast it also turns off an XLA autocast around it)",
                ),
            ),
        ),
        invalid(
            """
            import torch as th

            with th.amp.autocast(device_type="cuda", enabled=False):
                out = model(x)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            with th.autocast("xla", dtype=th.bfloat16, enabled=False):
                out = model(x)
            """,
            alias=True,
            note="cuda-autocast-off-alias",
            findings=(Expected(4, 6, 'th.amp.autocast -> th.autocast("xla", dtype=th.bfloat16, enabled=False)'),),
        ),
        invalid(
            """
            import torch

            with torch.cuda.amp.autocast(enabled=False):
                out = model(x)
            """,
            """
            import torch
            import torch_xla.amp

            with torch_xla.amp.autocast(enabled=False):
                out = model(x)
            """,
            target="sagemaker",
            note="cuda-autocast-off-sagemaker",
            findings=(
                Expected(4, 6, "torch.cuda.amp.autocast -> torch_xla.amp.autocast(enabled=False) (autocast off"),
            ),
        ),
    ),
)

NOTE = " (autocast off: float32 as before; as XLA autocast it also turns off an XLA autocast around it)"


def disabled(call: AutocastCall) -> bool:
    """The autocast is called with ``enabled=False``, a literal (by keyword or as CUDA
    autocast's first positional argument)."""
    import libcst as cst

    value: cst.BaseExpression | None = call.argument("enabled")
    return type(value) is cst.Name and value.value == "False"
