"""XLA104's cases of a CUDA device count tested for truth in a condition (SLM-Lab's ``if
torch.cuda.device_count(): self.device = f"cuda:{i}"``; ``... >= 1``): 0 on an XLA host, so an
availability check, dropped where it picks the device; and of a device choice under a function that
returns ``x and`` such a check (SLM-Lab's ``use_gpu``), which stays and is an error at its condition."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

# A device picked by a CUDA device count tested for truth (the same program for each target).
_COUNTED = """
import torch

if torch.cuda.device_count():
    device = "cuda:0"
else:
    device = "cpu"
model = torch.nn.Linear(4, 2).to(device)
"""
_COUNTED_PORTED = """
import torch
import torch_xla  # noqa: F401  (registers the "xla" device)

device = "xla"
model = torch.nn.Linear(4, 2).to(device)
"""
_DROPPED = "`torch.cuda.device_count()`: the accelerator check holds for the XLA device"

# SLM-Lab's device choice under a function that returns ``x and`` a count check.
_UNDER_A_WRAPPER = """
import torch

def use_gpu(gpu):
    if gpu in ("auto", None):
        return torch.cuda.is_available() and torch.cuda.device_count() > 0
    return gpu not in ("false", False)

class Net(torch.nn.Module):
    def __init__(self, spec):
        super().__init__()
        if use_gpu(spec.get("gpu")):
            if torch.cuda.device_count():
                self.device = "cuda:0"
            else:
                self.device = "cpu"
        else:
            self.device = "cpu"
        self.to(self.device)
"""


def count_check_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _COUNTED,
            _COUNTED_PORTED,
            note="a-device-count-tested-for-truth",
            findings=(Expected(4, 4, _DROPPED + ", so the code under it always runs: check dropped"),),
        ),
        invalid(
            _COUNTED,
            _COUNTED_PORTED,
            target="sagemaker",
            note="a-device-count-tested-for-truth-sagemaker",
            findings=(Expected(4, 4, _DROPPED),),
        ),
        invalid(
            """
            import torch as th

            device = th.device("cuda" if th.cuda.device_count() >= 1 else "cpu")
            model = th.nn.Linear(4, 2).to(device)
            """,
            """
            import torch as th
            import torch_xla  # noqa: F401  (registers the "xla" device)

            device = th.device("xla")
            model = th.nn.Linear(4, 2).to(device)
            """,
            alias=True,
            note="a-device-count-of-at-least-one",
            findings=(Expected(4, 20, "device picked by an accelerator check, which is False on XLA"),),
        ),
        invalid(
            _UNDER_A_WRAPPER,
            substituted(
                _UNDER_A_WRAPPER,
                ("import torch\n", 'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'),
                (
                    '            if torch.cuda.device_count():\n                self.device = "cuda:0"\n'
                    '            else:\n                self.device = "cpu"\n',
                    '            self.device = "xla"\n',
                ),
            ),
            note="a-device-choice-under-a-wrapper-that-returns-a-check-and-more",
            findings=(
                Expected(
                    12,
                    12,
                    '`use_gpu(spec.get("gpu"))` picks the device, but `use_gpu` returns `torch.cuda.is_available() '
                    "and torch.cuda.device_count() > 0`, which is False on XLA (no CUDA): the path without CUDA runs "
                    "and the model and tensors stay on the CPU; make `use_gpu` return True",
                ),
                Expected(13, 16, _DROPPED),
            ),
        ),
    )


def count_check_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            if torch.cuda.device_count() > 1:
                model = torch.nn.DataParallel(model)
            if torch.cuda.device_count():
                print("GPUs found")
            """,
            """
            import torch

            model = torch.nn.Linear(4, 2)
            if torch.cuda.device_count() > 1:
                pass
            if torch.cuda.device_count():
                print("GPUs found")
            """,
            note="a-device-count-that-picks-no-device",
        ),
    )
