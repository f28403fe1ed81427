"""XLA115 model-move-skipped."""

from __future__ import annotations

from codemods.device.rules.broken_proofs import reports_broken_proofs, stepped_model
from codemods.engine.rule import Expected, Rule, invalid, valid

MODEL_MOVE_SKIPPED = Rule(
    code="XLA115",
    name="model-move-skipped",
    severity="error",
    summary="The model the optimizer steps moves only under a condition that is False on an XLA host after the port",
    fixable=False,
    why="Obligation (1), the path that runs: `if use_gpu: model.cuda()` with a flag the port cannot switch on "
    "(set from a CUDA check it keeps, or from an MPS check) leaves the model on the CPU on an XLA host, while "
    "the rest of the script is ported. The finding is at the move and names the condition. To resolve it, "
    "move the model to the XLA device on every path (or make the condition hold on an XLA host).",
    examples=lambda: (
        invalid(
            """
            import torch

            use_gpu = torch.backends.mps.is_available()
            model = torch.nn.Linear(4, 2)
            if use_gpu:
                model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            use_gpu = torch.backends.mps.is_available()
            model = torch.nn.Linear(4, 2)
            if use_gpu:
                model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(7, 5, "moves only under `if use_gpu:`, which is False on an XLA host"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            if args.cuda:
                model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2)
            if args.cuda:
                model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            note="a-flag-the-user-sets",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th

            use_gpu = th.backends.mps.is_available()
            model = th.nn.Linear(4, 2)
            if use_gpu:
                model = model.cuda()
            optimizer = th.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            use_gpu = th.backends.mps.is_available()
            model = th.nn.Linear(4, 2)
            if use_gpu:
                model = model.to(xm.xla_device())
            optimizer = th.optim.SGD(model.parameters(), lr=0.1)
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(7, 13, "which is False on an XLA host after the port"),),
        ),
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2)
            n_gpu = torch.cuda.device_count()
            if n_gpu > 0:
                model.cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            model = torch.nn.Linear(4, 2)
            n_gpu = torch.cuda.device_count()
            if n_gpu > 0:
                model.to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(7, 5, "moves only under `if n_gpu > 0:`, which is False"),),
            note="a-device-count-that-stays-0",
        ),
    ),
)

# What the device obligations (device/obligations.py) say where a proof breaks with this rule.


def stepped_model_moves_only_if(model: str, optimizer: str, test: str) -> str:
    """The stepped model moves only under a condition that is False on an XLA host."""
    return (
        f"{stepped_model(model, optimizer)} moves only under `if {test}:`, which is False on an XLA host after the "
        "port: it trains on the CPU; move it to the XLA device on every path"
    )


# Where a proof of the obligations broke with this rule (device/obligations.py), as the module is left.
reports_broken_proofs(MODEL_MOVE_SKIPPED)
