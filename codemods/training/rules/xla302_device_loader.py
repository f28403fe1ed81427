"""XLA302 device-loader."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

DEVICE_LOADER = Rule(
    code="XLA302",
    name="device-loader",
    severity="error",
    summary="A loader that feeds the XLA device is wrapped in MpDeviceLoader",
    fixable=True,
    why="Where every batch of a training loop goes to the XLA device, `MpDeviceLoader` moves the batches in "
    "the background and runs the step barrier itself, so transfers overlap compute (the SageMaker guide's "
    "preference); without it, or a barrier, the graph grows without end.",
    examples=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            device = torch_xla.device()
            for x, y in pl.MpDeviceLoader(train_loader, device):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            findings=(Expected(6, 13, "train_loader -> pl.MpDeviceLoader(train_loader, device)"),),
        ),
    ),
    valid=lambda: (
        # The loop drops samples on the host: on the device every new batch shape would be a
        # new graph, so the loop keeps the barrier and its own moves.
        valid(
            """
            import torch

            device = torch.device("cuda")
            for inputs, labels in train_loader:
                keep = ~torch.isnan(inputs).any(dim=1)
                inputs, labels = inputs[keep], labels[keep]
                inputs, labels = inputs.to(device), labels.to(device)
                loss = model(inputs, labels)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            for inputs, labels in train_loader:
                keep = ~torch.isnan(inputs).any(dim=1)
                inputs, labels = inputs[keep], labels[keep]
                inputs, labels = inputs.to(device), labels.to(device)
                loss = model(inputs, labels)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            note="host-side-filtering",
        ),
        valid(
            """
            import torch

            if args.cpu:
                device = torch.device("cpu")
            else:
                device = torch.device("cuda")
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla

            if args.cpu:
                device = torch.device("cpu")
            else:
                device = torch_xla.device()
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
                torch_xla.sync()
            """,
            note="cpu-path-keeps-barrier",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            device = torch.device("cuda")
            for i, (x, y) in enumerate(train_loader):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            device = torch_xla.device()
            for i, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, device)):
                x, y = x.to(device), y.to(device)
                loss_fn(model(x), y).backward()
            """,
            findings=(Expected(6, 28, "train_loader -> pl.MpDeviceLoader(train_loader, device)"),),
        ),
        invalid(
            """
            import torch as th

            dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
            for (batch,) in self.train_loader:
                batch = batch.to(dev)
                model(batch).sum().backward()
            """,
            """
            import torch as th
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl

            dev = torch_xla.device()
            for (batch,) in pl.MpDeviceLoader(self.train_loader, dev):
                batch = batch.to(dev)
                model(batch).sum().backward()
            """,
            alias=True,
            findings=(Expected(6, 17, "self.train_loader -> pl.MpDeviceLoader(self.train_loader, dev)"),),
        ),
    ),
)
