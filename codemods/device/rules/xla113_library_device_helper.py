"""XLA113 library-device-helper."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

LIBRARY_DEVICE = Rule(
    code="XLA113",
    name="library-device-helper",
    severity="error",
    summary="A library's device helper that returns the CPU on an XLA host (`torch_geometric.device('auto')`) becomes the XLA device",
    fixable=True,
    why='Libraries pick the device for their users: `torch_geometric.device("auto")` asks for CUDA, MPS and '
    "XPU and else returns the CPU, so on an XLA host the model trains on the CPU. The known helpers are one "
    "table (`apis.DEVICE_HELPERS`), checked against the released code: Accelerate's `Accelerator().device` and "
    "`PartialState().device` and Transformers' `TrainingArguments.device` return the XLA device when torch_xla "
    "is installed (nothing to do); `torch.accelerator.current_accelerator()` is replaced by XLA101; "
    '`torch.get_default_device()` returns the CPU (XLA111 where a model goes there). A helper asked for `"auto"` '
    "becomes the target's device call.",
    examples=lambda: (
        invalid(
            """
            import torch
            import torch_geometric

            device = torch_geometric.device("auto")
            model = torch.nn.Linear(4, 2).to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(device)
            """,
            findings=(Expected(4, 10, 'torch_geometric.device("auto") -> torch_xla.device()'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch_geometric

            device = torch_geometric.device("cpu")
            """,
            note="an-explicit-device",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from torch_geometric import device as pick

            dev = pick("auto")
            """,
            """
            import torch_xla.core.xla_model as xm

            dev = xm.xla_device()
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(3, 7, 'pick("auto") -> xm.xla_device()'),),
        ),
    ),
)
