"""XLA104's programs of a flag that picks the device and also sets a CUDA choice for code the tool
cannot see (device/unread_holders.py): ``cmd_args.mode = 'gpu' if args.cuda else 'cpu'`` where only
a star import of a module the tool cannot read may bind ``cmd_args`` (SEAL's Python/Main.py and
pytorch_DGCNN's ``main``).  The flag is left as written, with an error; beside a name the file binds,
or a star import of a followed package, it is dropped as any device flag (executed:
tests/device/test_executed_unread_holder.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_SEAL = """
import argparse
import torch
from main import *

parser = argparse.ArgumentParser()
parser.add_argument("--no-cuda", action="store_true", default=False)
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
cmd_args.mode = "gpu" if args.cuda else "cpu"
model = Classifier()
if args.cuda:
    model = model.cuda()
"""
_LEFT = (
    '`args.cuda` picks the device but also sets `cmd_args.mode` to a CUDA choice (`cmd_args.mode = "gpu" if '
    'args.cuda else "cpu"`) for code the tool cannot see (only `from main import *` may bind `cmd_args`, and the '
    "tool cannot read it): switched on, that code would take the XLA host for a CUDA one, and a .cuda() there "
    "raises without CUDA: left as is, so the script runs on the CPU"
)


def _moved(program: str, device: str, imported: str) -> str:
    return substituted(
        program, ("import torch\n", f"import torch\n{imported}"), ("model.cuda()", f"model.to({device})")
    )


def unread_holder_cases() -> tuple[Invalid, ...]:
    return (
        invalid(
            _SEAL,
            _moved(_SEAL, "torch_xla.device()", "import torch_xla\n"),
            note="a-flag-that-sets-a-cuda-choice-on-a-name-of-an-unread-star-import",
            findings=(Expected(9, 13, _LEFT),),
        ),
        invalid(
            _SEAL,
            _moved(_SEAL, "xm.xla_device()", "import torch_xla.core.xla_model as xm\n"),
            target="sagemaker",
            note="a-flag-that-sets-a-cuda-choice-on-a-name-of-an-unread-star-import-sagemaker",
            findings=(Expected(9, 13, _LEFT),),
        ),
        invalid(
            substituted(
                _SEAL,
                ("from main import *", "from .dgcnn import *"),
                (
                    'cmd_args.mode = "gpu" if args.cuda else "cpu"',
                    'conf.opts.device = "cuda:0" if args.cuda else "cpu"',
                ),
            ),
            substituted(
                _moved(_SEAL, "torch_xla.device()", "import torch_xla\n"),
                ("from main import *", "from .dgcnn import *"),
                ('cmd_args.mode = "gpu" if args.cuda else "cpu"', 'conf.opts.device = "xla" if args.cuda else "cpu"'),
            ),
            alias=True,
            note="a-flag-that-sets-a-cuda-device-on-an-attribute-chain-of-a-relative-star-import",
            findings=(
                Expected(
                    9,
                    13,
                    "`args.cuda` picks the device but also sets `conf.opts.device` to a CUDA choice "
                    '(`conf.opts.device = "cuda:0" if args.cuda else "cpu"`) for code the tool cannot see (only '
                    "`from .dgcnn import *` may bind `conf`",
                ),
            ),
        ),
    )


def unread_holder_dropped_cases() -> tuple[Invalid, ...]:
    """The flag beside a name the file binds, or a star import of a followed package: dropped."""
    dropped = substituted(
        _moved(_SEAL, "torch_xla.device()", "import torch_xla\n"),
        ("not args.no_cuda and torch.cuda.is_available()", "not args.no_cuda"),
    )
    bound = ("\nmodel = Classifier()", "\ncmd_args = argparse.Namespace()\nmodel = Classifier()")
    return (
        invalid(
            substituted(_SEAL, bound),
            substituted(dropped, bound),
            note="a-flag-that-sets-a-cuda-choice-on-a-name-the-file-binds",
            findings=(Expected(9, 13, "`args.cuda` picks the device: its accelerator check is dropped"),),
        ),
        invalid(
            substituted(_SEAL, ("from main import *", "from numpy import *")),
            substituted(dropped, ("from main import *", "from numpy import *")),
            note="a-flag-that-sets-a-cuda-choice-beside-a-followed-packages-star-import",
            findings=(Expected(9, 13, "`args.cuda` picks the device: its accelerator check is dropped"),),
        ),
    )


def unread_holder_valid_cases() -> tuple[Valid, ...]:
    return (
        valid(
            substituted(
                _SEAL,
                ("not args.no_cuda and torch.cuda.is_available()", "not args.no_cuda"),
                ("    model = model.cuda()\n", "    model = model.double()\n"),
            ),
            note="a-flag-without-a-cuda-check-that-sets-a-choice-on-a-name-of-an-unread-star-import",
        ),
    )
