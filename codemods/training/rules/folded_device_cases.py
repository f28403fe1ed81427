"""XLA203's cases of a device the port folds to XLA (an availability chain that also names MPS or
the CPU) and of a name bound to a new model before the move (the first model's optimizer gets no
finding): the first run's output is final (a second run found the fold's plain XLA device)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid


def folded_device_valid() -> tuple[Valid, ...]:
    return (
        valid(
            """
            import torch

            device = torch.device("cuda")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model = torch.nn.Linear(3, 1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model = torch.nn.Linear(3, 1)
            model.to(device)
            """,
            note="the-name-is-built-anew-before-the-move",
        ),
    )


def folded_device_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            if torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.backends.mps.is_available():
                device = torch.device("mps")
            else:
                device = torch.device("cpu")
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.to(device)
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1)
            model.to(device)
            """,
            note="a-device-picked-by-an-availability-chain-the-port-folds",
            findings=(Expected(6, 29, "the optimizer is built while `model` is on the CPU and `model.to(device)`"),),
        ),
        invalid(
            """
            from torch import cuda, nn, optim
            import torch

            if cuda.is_available():
                dev = torch.device("cuda")
            else:
                dev = torch.device("cpu")
            net = nn.Linear(3, 1)
            opt = optim.Adam(net.parameters())
            net = net.to(dev)
            """,
            """
            from torch import nn, optim
            import torch
            import torch_xla.core.xla_model as xm

            dev = xm.xla_device()
            net = nn.Linear(3, 1)
            opt = optim.Adam(net.to(xm.xla_device()).parameters())
            net = net.to(dev)
            """,
            target="sagemaker",
            alias=True,
            note="a-device-picked-by-an-availability-check-the-port-folds-aliased",
            findings=(Expected(7, 18, "the optimizer is built while `net` is on the CPU and `net.to(dev)` moves"),),
        ),
    )
