"""XLA003: setup that lives in another file of the project."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

CROSS_FILE = Rule(
    code="XLA003",
    name="cross-file",
    severity="error",
    summary="Setup that comes from another file must be converted there",
    fixable=False,
    why="Each file is converted on its own terms: when the device or the optimizer comes from, or goes to, "
    "a function of another file of the project, the code there (device choice, training loop) still runs on "
    "CUDA terms until that file is converted too. A run on a single file follows what the file uses of the "
    "project modules the run does not convert (imported names, attributes of imported modules, and what their "
    "functions and classes call in their modules, or hand on by name: `block = Block` then `block(a, b)`, "
    "`make_layers(Block, ...)`, or look up in a module-level dict or list of classes: a factory's "
    "`return TRAINERS[args.trainer](...)`; or of modules, any name of them: `FORMATS[name].parse_args(...)`; a few "
    "modules deep): when that code holds what converting it "
    "would port or report as an error (a CUDA device choice, `.cuda()`, a default tensor type on CUDA, a "
    "training loop or optimizer step, CUDA mixed precision, CUDA-only APIs, a checkpoint load without a CPU map "
    "location, but not a reload of host data the module saves itself: XLA403), the finding is at the import that "
    "leads there, once per module, naming the function or class and the code, and saying what converting the "
    "project (`xla-codemod convert .` at its root) does with it: ports it, ports part of it and reports the rest, "
    "or only reports it (Apex, sparse tensors, a typed CUDA constructor kept as a value: errors there to fix by "
    "hand). Modules whose used code is device-agnostic (it takes the "
    "device as a parameter) get nothing, and a run on the whole project converts them instead. A star import of a "
    "project module (`from net import *`) binds that module's names here, its imports included: `torch` from its "
    "`import torch` is torch, its CUDA checks are ported as with `import torch`; where the tool cannot read that "
    "module, a CUDA check on a `torch` that only the star import may bind (`torch.cuda.is_available()`) is left "
    "as written, and is an error at the check: on an XLA host it is False, so what branches on it stays off the "
    "device.",
    examples=lambda: (
        invalid(
            """
            import torch
            from helpers import train_one_epoch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_one_epoch(model, loader, optimizer)
            """,
            findings=(Expected(5, 1, "the optimizer goes to `train_one_epoch` in another module of the project"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            def get_device():
                return torch.device("cpu")

            device = get_device()
            """,
            note="defined-here",
        ),
        valid(
            """
            import torch
            import torch_xla

            def train_one_epoch(model, loader, optimizer, loss_scaler):
                for x in loader:
                    with torch.autocast("xla", dtype=torch.bfloat16):
                        loss = model(x)
                    loss_scaler(loss, optimizer, parameters=model.parameters())
                    torch_xla.sync()
            """,
            note="step-wrapper-passed-in-names-no-file",
        ),
        valid(
            """
            import torch
            from net import *

            use_cuda = torch.cuda.is_available()
            """,
            note="torch-imported-by-name-beside-a-star-import",
        ),
        valid(
            """
            from torch import *

            n = torch.cuda.device_count()
            """,
            note="a-star-import-of-torch-binds-no-torch",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from helpers import get_device

            device = get_device()
            """,
            findings=(Expected(4, 10, "the device comes from `get_device` in another module of the project"),),
        ),
        invalid(
            """
            import torch
            from engine import train_one_epoch

            optimizer = torch.optim.AdamW(params)
            for epoch in range(10):
                train_one_epoch(model, loader, optimizer, epoch)
            """,
            note="training-step-in-another-file",
            findings=(Expected(6, 5, "the optimizer goes to `train_one_epoch` in another module of the project"),),
        ),
        invalid(
            """
            import torch
            from .utils import pick_device as pd

            device = pd()
            """,
            note="relative-import",
            alias=True,
            findings=(Expected(4, 10, "the device comes from `pd` in another module of the project"),),
        ),
        # ``torch`` only a star import of a project module that this run cannot read may bind
        # (a run on the project reads it: tests/project/test_star_imports.py).
        invalid(
            """
            from net import *

            use_cuda = torch.cuda.is_available()
            if use_cuda:
                model.cuda()
            """,
            """
            from net import *
            import torch_xla

            use_cuda = torch.cuda.is_available()
            if use_cuda:
                model.to(torch_xla.device())
            """,
            note="torch-from-an-unread-star-import",
            findings=(Expected(4, 12, "names `torch`, which only `from net import *` may bind"),),
        ),
        invalid(
            """
            from .net import *

            n = torch.cuda.device_count()
            """,
            note="torch-from-an-unread-relative-star-import",
            alias=True,
            findings=(Expected(3, 5, "names `torch`, which only `from .net import *` may bind"),),
        ),
        invalid(
            """
            from .net import *

            n = torch.cuda.device_count()
            """,
            target="sagemaker",
            note="torch-from-an-unread-relative-star-import-sagemaker",
            alias=True,
            findings=(Expected(3, 5, "names `torch`, which only `from .net import *` may bind"),),
        ),
    ),
)

RULES = (CROSS_FILE,)
