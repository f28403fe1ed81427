"""XLA104's and XLA119's cases of a CUDA check handed as an argument to a callable that picks the
device with that parameter (``use_cuda = torch.cuda.is_available()``, then ``Net(use_cuda=use_cuda)``,
whose ``__init__`` picks ``torch.device("cuda" if use_cuda else "cpu")``; GRU4REC-pytorch's main.py
and lib/): device/flag_choices.py.  The same across modules is tests/project/test_handed_cuda_flags.py."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid

_KEYWORD = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, on_gpu=False):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.to(torch.device("cuda" if on_gpu else "cpu"))


available = torch.cuda.is_available()
model = Net(on_gpu=available)
"""

# Positional, through ``self.on_gpu`` (set from the parameter in ``__init__``) in a method's move.
_POSITIONAL = """
import torch as th
from torch import nn


class Net(nn.Module):
    def __init__(self, width, on_gpu=False):
        super().__init__()
        self.on_gpu = on_gpu
        self.fc = nn.Linear(width, 2)

    def place(self, x):
        if self.on_gpu:
            x = x.cuda()
        return x


available = th.cuda.is_available()
model = Net(4, available)
"""


def handed_flag_cases() -> tuple[Invalid, ...]:
    """XLA104: the check is dropped, the flag True on XLA (the callee's choice is ported there)."""
    message = "`available` picks the device in `Net`: its accelerator check is dropped"
    return (
        invalid(
            _KEYWORD,
            _KEYWORD.replace(
                "from torch import nn\n",
                'from torch import nn\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n',
            )
            .replace('"cuda" if on_gpu', '"xla" if on_gpu')
            .replace("available = torch.cuda.is_available()", "available = True"),
            note="a-check-handed-by-keyword-to-a-callable-that-picks-the-device-with-it",
            findings=(Expected(13, 13, message),),
        ),
        invalid(
            _POSITIONAL,
            _POSITIONAL.replace("from torch import nn\n", "from torch import nn\nimport torch_xla\n")
            .replace("x.cuda()", "x.to(torch_xla.device())")
            .replace("available = th.cuda.is_available()", "available = True"),
            note="a-check-handed-by-position-read-through-an-attribute",
            alias=True,
            findings=(Expected(18, 13, message),),
        ),
        invalid(
            _POSITIONAL,
            _POSITIONAL.replace(
                "from torch import nn\n", "from torch import nn\nimport torch_xla.core.xla_model as xm\n"
            )
            .replace("x.cuda()", "x.to(xm.xla_device())")
            .replace("available = th.cuda.is_available()", "available = True"),
            target="sagemaker",
            note="a-check-handed-by-position-sagemaker",
            alias=True,
            findings=(Expected(18, 13, message),),
        ),
    )


def handed_flag_valid_cases() -> tuple[Valid, ...]:
    """A check handed to a parameter that picks no device stays (XLA105's warning)."""
    return (
        valid(
            """
            import torch


            class Logger:
                def __init__(self, verbose=False):
                    self.verbose = verbose
                    if verbose:
                        print("verbose")


            available = torch.cuda.is_available()
            log = Logger(verbose=available)
            """,
            note="a-check-handed-to-a-parameter-that-picks-no-device",
        ),
        valid(
            """
            import torch


            class Logger:
                def __init__(self, verbose=False):
                    self.verbose = verbose


            log = Logger(verbose=torch.cuda.is_available())
            """,
            target="sagemaker",
            note="a-check-handed-to-a-parameter-that-picks-no-device-sagemaker",
        ),
    )


def _ported(source: str, after: str, imports: str) -> str:
    """``source`` with ``imports`` after the line ``after`` and its CUDA device choice ported."""
    return source.replace(after, after + imports).replace('"cuda" if on_gpu', '"xla" if on_gpu')


def handed_check_cases() -> tuple[Invalid, ...]:
    """XLA119: a check handed as it is (no flag to switch on) stays, and the callee picks the CPU on XLA."""
    source = _KEYWORD.replace("available = torch.cuda.is_available()\n", "").replace(
        "Net(on_gpu=available)", "Net(on_gpu=torch.cuda.is_available())"
    )
    aliased = source.replace("import torch\n", "import torch as T\n").replace("torch.", "T.")
    message = (
        "`torch.cuda.is_available()` is False on an XLA host after the port, and it is handed to `Net` as `on_gpu` "
        "(`Net(on_gpu=torch.cuda.is_available())`), which picks the device with `on_gpu`"
    )
    return (
        invalid(
            source,
            _ported(source, "from torch import nn\n", 'import torch_xla  # noqa: F401  (registers the "xla" device)\n'),
            note="a-check-handed-as-it-is-to-a-callable-that-picks-the-device-with-it",
            findings=(Expected(13, 20, message),),
        ),
        invalid(
            aliased,
            _ported(
                aliased, "from torch import nn\n", 'import torch_xla  # noqa: F401  (registers the "xla" device)\n'
            ),
            target="sagemaker",
            alias=True,
            note="a-check-handed-as-it-is-sagemaker",
            findings=(
                Expected(13, 20, "is False on an XLA host after the port, and it is handed to `Net` as `on_gpu`"),
            ),
        ),
    )
