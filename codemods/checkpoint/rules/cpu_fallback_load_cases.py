"""XLA403's cases of a ``torch.load`` whose ``except`` loads the same file onto the CPU
(GRU4REC-pytorch's main.py): it loads on XLA as written (checkpoint/cpu_fallbacks.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_FALLBACK = """
import torch

try:
    checkpoint = torch.load(args.load_model)
except:
    checkpoint = torch.load(args.load_model, map_location=lambda storage, loc: storage)
model.load_state_dict(checkpoint["state_dict"])
"""


def cpu_fallback_valid() -> tuple[Valid, ...]:
    return (
        valid(_FALLBACK, note="a-load-whose-handler-loads-onto-the-cpu"),
        valid(
            _FALLBACK.replace("import torch\n", "import torch as T\n")
            .replace("torch.load", "T.load")
            .replace("except:", "except (OSError, RuntimeError):")
            .replace("lambda storage, loc: storage", '"cpu"'),
            target="sagemaker",
            note="a-load-whose-handler-loads-onto-the-cpu-sagemaker",
        ),
    )


def cpu_fallback_invalid() -> tuple[Invalid, ...]:
    """A handler that does not catch the RuntimeError of a CUDA checkpoint loaded without CUDA."""
    source = _FALLBACK.replace("except:", "except FileNotFoundError:")
    ported = source.replace("torch.load(args.load_model)", 'torch.load(args.load_model, map_location="cpu")')
    return tuple(
        invalid(
            source,
            ported,
            target=target,
            note=f"a-handler-that-does-not-catch-the-load-error-{target}",
            findings=(Expected(4, 46, 'torch.load(...) -> map_location="cpu"'),),
        )
        for target in ("2.9", "sagemaker")
    )
