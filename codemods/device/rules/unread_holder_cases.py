"""XLA104's programs of a flag that picks the device and also sets a CUDA mode word for code the tool
cannot see (device/unread_holders.py): ``cmd_args.mode = 'gpu' if args.cuda else 'cpu'`` where only
a star import of a module the tool cannot read may bind ``cmd_args`` (SEAL's Python/Main.py and
pytorch_DGCNN's ``main``).  The flag is left as written, with an error; so is a check that sets the
word itself (``'gpu' if torch.cuda.is_available() else 'cpu'``).  Beside a name the file binds, or a
star import of a followed package, the flag is dropped as any device flag; so is one that sets a
device string (``cfg.device = 'cuda:0' if args.cuda else 'cpu'``: the holder gets "xla", and the code
that reads it moves to the XLA device), and a check that picks one is folded to "xla" (executed:
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

# The choice made by the check itself (the executed test's shape, without a flag).
_CHECKED = """
import torch
from main import *

model = Classifier()
cmd_args.mode = "gpu" if torch.cuda.is_available() else "cpu"
loop_dataset(model)
"""
# The file reads the word too (a flag of its own): its move is ported, the check stays all the same.
_MODE_MOVE = 'if cmd_args.mode == "gpu":\n    model = model{}\nloop_dataset(model)'
_CHECK_LEFT = (
    '`torch.cuda.is_available()` sets `cmd_args.mode` to a CUDA mode word, not a device (`cmd_args.mode = "gpu" '
    'if torch.cuda.is_available() else "cpu"`), for code the tool cannot see (only `from main import *` may bind '
    "`cmd_args`, and the tool cannot read it): dropped, the check would make that code take the XLA host for a "
    "CUDA one, and a .cuda() there raises without CUDA: left as is, so on XLA (no CUDA) that code runs on the CPU; "
    "port that code to the XLA device by hand, then drop the check"
)

# A device string the check picks for the holder (the reviewed regression: the port ran it on the CPU).
_DEVICE_CHECKED = """
import torch
from main import *

cfg.device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Linear(2, 2).to(cfg.device)
"""
_FOLDED = 'device picked by an accelerator check, which is False on XLA: the XLA device is always present -> "xla"'


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
            _CHECKED,
            note="a-check-that-sets-a-cuda-mode-word-on-a-name-of-an-unread-star-import",
            findings=(Expected(5, 26, _CHECK_LEFT),),
        ),
        invalid(
            _CHECKED,
            target="sagemaker",
            note="a-check-that-sets-a-cuda-mode-word-on-a-name-of-an-unread-star-import-sagemaker",
            findings=(Expected(5, 26, _CHECK_LEFT),),
        ),
        invalid(
            substituted(_CHECKED, ("loop_dataset(model)", _MODE_MOVE.format(".cuda()"))),
            substituted(
                _CHECKED,
                ("import torch\n", "import torch\nimport torch_xla\n"),
                ("loop_dataset(model)", _MODE_MOVE.format(".to(torch_xla.device())")),
            ),
            note="a-check-that-sets-a-cuda-mode-word-the-file-compares-too-on-a-name-of-an-unread-star-import",
            findings=(Expected(6, 26, _CHECK_LEFT),),
        ),
        invalid(
            substituted(
                _CHECKED,
                ("import torch\n", "import torch as th\n"),
                ("from main import *", "from .dgcnn import *"),
                ('cmd_args.mode = "gpu" if torch.cuda', 'conf.opts.mode = "GPU" if not cpu_only and th.cuda'),
            ),
            alias=True,
            note="a-check-that-sets-a-cuda-mode-word-on-an-attribute-chain-of-a-relative-star-import",
            findings=(
                Expected(
                    5,
                    27,
                    "`not cpu_only and th.cuda.is_available()` sets `conf.opts.mode` to a CUDA mode word, not a "
                    'device (`conf.opts.mode = "GPU" if not cpu_only and th.cuda.is_available() else "cpu"`), '
                    "for code the tool cannot see (only `from .dgcnn import *` may bind `conf`",
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
    # A device string, not a mode word: the holder gets "xla" (the code that reads it moves there).
    device_string = (
        ("from main import *", "from .dgcnn import *"),
        ('cmd_args.mode = "gpu" if args.cuda', 'conf.opts.device = "cuda:0" if args.cuda'),
    )
    ported_string = (
        ("from main import *", "from .dgcnn import *"),
        ('cmd_args.mode = "gpu" if args.cuda', 'conf.opts.device = "xla" if args.cuda'),
    )
    folded = (
        ("import torch\n", 'import torch\nimport torch_xla  # noqa: F401  (registers the "xla" device)\n'),
        ('"cuda" if torch.cuda.is_available() else "cpu"', '"xla"'),
    )
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
        invalid(
            substituted(_SEAL, *device_string),
            substituted(dropped, *ported_string),
            alias=True,
            note="a-flag-that-sets-a-cuda-device-string-on-an-attribute-chain-of-a-relative-star-import",
            findings=(Expected(9, 13, "`args.cuda` picks the device: its accelerator check is dropped"),),
        ),
        *(
            invalid(
                _DEVICE_CHECKED,
                substituted(_DEVICE_CHECKED, *folded),
                target=target,
                note="a-check-that-sets-a-cuda-device-on-a-name-of-an-unread-star-import"
                + ("-sagemaker" if target == "sagemaker" else ""),
                findings=(Expected(5, 14, _FOLDED),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            substituted(
                _DEVICE_CHECKED,
                ('"cuda" if', '"cuda:0" if'),
                ("import torch\n", "import torch as th\n"),
                ("torch.", "th."),
            ),
            substituted(_DEVICE_CHECKED, *folded, ("import torch\n", "import torch as th\n"), ("torch.nn", "th.nn")),
            alias=True,
            note="a-check-that-sets-a-cuda-index-string-on-a-name-of-an-unread-star-import",
            findings=(Expected(5, 14, _FOLDED),),
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
