"""XLA106 set-device."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

SET_DEVICE = Rule(
    code="XLA106",
    name="set-device",
    severity="error",
    summary="`torch.cuda.set_device()` is removed: one XLA device per process",
    fixable=True,
    why="`torch.cuda.set_device()` raises without CUDA. On XLA the runtime gives each process its one device, "
    "so the call is removed. In a file that imports torch_xla conditionally (its own non-XLA path, which the tool "
    "keeps) a call under a check that is False on an XLA host (`if torch.cuda.is_available():`, a CUDA check of "
    "the device the file picked: `if device.type == 'cuda':`) never runs there and is right where it runs: "
    "nothing to report.",
    examples=lambda: (
        invalid(
            """
            import torch

            torch.cuda.set_device(args.local_rank)
            device = torch.device("cuda", args.local_rank)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            """,
            findings=(Expected(4, 1, "removed `torch.cuda.set_device(args.local_rank)`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import importlib.util

            import torch

            XLA = importlib.util.find_spec("torch_xla") is not None
            if XLA:
                import torch_xla.core.xla_model as xm


            def pick_device(use_cpu):
                if use_cpu:
                    device = torch.device("cpu")
                elif XLA:
                    device = xm.xla_device()
                else:
                    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
                if device.type == "cuda":
                    torch.cuda.set_device(device)
                return device
            """,
            note="a file with its own XLA path: a set_device under a CUDA check of the device it picked",
        ),
        valid(
            """
            import torch

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if torch.cuda.is_available():
                torch.cuda.set_device(local_rank)
            """,
            note="a file with its own XLA path: a set_device under a CUDA availability check",
        ),
        valid(
            """
            import torch

            xla_runtime.set_device(0)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if args.cuda:
                torch.cuda.set_device(args.local_rank)
            """,
            note="a file with its own XLA path: a set_device under a flag",
            findings=(Expected(8, 1, "removed `if args.cuda: torch.cuda.set_device(args.local_rank)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            try:
                import torch_xla.core.xla_model as xm
            except ImportError:
                xm = None

            if args.cuda:
                set_device(args.local_rank)
            """,
            alias=True,
            note="a file with its own XLA path: an imported set_device under a flag",
            findings=(Expected(9, 1, "removed `if args.cuda: set_device(args.local_rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(rank):
                torch.accelerator.set_device_index(rank)
                return torch.accelerator.current_accelerator()
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            def setup(rank):
                return torch.device("xla")
            """,
            note="torch-accelerator",
            findings=(Expected(5, 5, "removed `torch.accelerator.set_device_index(rank)`"),),
        ),
        invalid(
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                torch.cuda.set_device(gpu)
            """,
            """
            import torch

            def setup(gpu):
                # pin this process to its GPU
                pass
            """,
            note="only-statement",
            findings=(Expected(5, 5, "removed `torch.cuda.set_device(gpu)`"),),
        ),
        invalid(
            """
            import torch
            from torch.cuda import set_device

            set_device(args.local_rank)
            train()
            """,
            """
            import torch

            train()
            """,
            alias=True,
            findings=(Expected(3, 1, "removed `set_device(args.local_rank)`"),),
        ),
    ),
)
