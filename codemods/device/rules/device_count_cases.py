"""XLA111's cases for a device chosen by a test of a name that holds `torch.cuda.device_count()`,
which stays 0 on an XLA host (`n_gpu = torch.cuda.device_count()`, then `if cuda and n_gpu:`): the
branch the port gave the XLA device never runs; also when the optimizer steps a wrapper of the
moved module (`MAML(model)`).  The count tested for truth in the condition itself (learn2learn's
`if cuda and torch.cuda.device_count():`) is an availability check, which XLA104 drops."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def device_count_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            """
            import torch

            device = torch.device("cpu")
            n_gpu = torch.cuda.device_count()
            if cuda and n_gpu:
                device = torch.device("cuda")
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla

            device = torch.device("cpu")
            n_gpu = torch.cuda.device_count()
            if cuda and n_gpu:
                device = torch_xla.device()
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(4, 23, 'which ends on "cpu" (the CPU) on an XLA host after the port'),),
            note="a-device-count-that-stays-0",
        ),
        invalid(
            """
            import torch

            n_gpu = torch.cuda.device_count()
            device = torch.device("cuda" if n_gpu > 0 else "cpu")
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla  # noqa: F401  (registers the "xla" device)

            n_gpu = torch.cuda.device_count()
            device = torch.device("xla" if n_gpu > 0 else "cpu")
            model = torch.nn.Linear(4, 2).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            """,
            findings=(Expected(5, 48, 'which ends on "cpu" (the CPU) on an XLA host after the port'),),
            note="a-device-count-compared-with-0",
        ),
        invalid(
            """
            import torch
            import learn2learn as l2l

            device = torch.device("cpu")
            n_gpu = torch.cuda.device_count()
            if cuda and n_gpu:
                device = torch.device("cuda")
            model = torch.nn.Linear(4, 2)
            model.to(device)
            maml = l2l.algorithms.MAML(model, lr=0.5)
            optimizer = torch.optim.Adam(maml.parameters(), lr=0.1)
            """,
            """
            import torch
            import torch_xla
            import learn2learn as l2l

            device = torch.device("cpu")
            n_gpu = torch.cuda.device_count()
            if cuda and n_gpu:
                device = torch_xla.device()
            model = torch.nn.Linear(4, 2)
            model.to(device)
            maml = l2l.algorithms.MAML(model, lr=0.5)
            optimizer = torch.optim.Adam(maml.parameters(), lr=0.1)
            """,
            findings=(Expected(5, 23, 'which ends on "cpu" (the CPU) on an XLA host after the port'),),
            note="a-wrapper-of-a-module-the-device-count-leaves-on-the-cpu",
        ),
    )
