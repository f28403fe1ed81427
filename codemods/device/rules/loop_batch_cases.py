"""XLA116's cases of loops that feed a model on the XLA device batches they never move: a kept
wrapper's CPU tensors, batches a method of another module makes, evaluation loops that forget the
training loop's move, data cached onto CUDA, moves under a count of CUDA devices."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid


def loop_batch_invalid() -> tuple[Invalid, ...]:
    """Loops whose batches stay on the CPU: both targets, aliases where the spelling differs."""
    return (
        invalid(
            """
        import torch
        import torch.nn as nn


        def build(net):
            model = nn.DataParallel(net)
            out = model(torch.randn(8, 4))
            return model
        """,
            None,
            note="kept-wrapper-cpu-tensor",
            target="sagemaker",
            findings=(
                Expected(
                    7,
                    11,
                    "`torch.randn(8, 4)` reaches `model` on the CPU: `nn.DataParallel` scattered every tensor of its "
                    "inputs to the GPUs, which it never does without CUDA devices",
                ),
            ),
        ),
        invalid(
            """
        import torch
        from model import Tacotron2

        model = Tacotron2().cuda()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for i, batch in enumerate(train_loader):
            x, y = model.parse_batch(batch)
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
            """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        from model import Tacotron2

        model = Tacotron2().to(torch_xla.device())
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for i, batch in enumerate(train_loader):
            x, y = model.parse_batch(batch)
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        """,
            note="batches-made-by-a-method-of-another-module",
            findings=(
                Expected(
                    9,
                    12,
                    "`x` reaches `model` (on the XLA device) from `model.parse_batch()` in model.py, "
                    "which this run does not read",
                ),
            ),
        ),
        invalid(
            """
        import torch as th
        from model import Tacotron2 as T

        net = T().cuda()
        opt = th.optim.Adam(net.parameters())
        for batch in loader:
            inputs, targets = net.parse_batch(batch)
            opt.zero_grad()
            th.nn.functional.mse_loss(net(inputs), targets).backward()
            opt.step()
        """,
            """
        import torch as th
        import torch_xla.core.xla_model as xm
        from model import Tacotron2 as T

        net = T().to(xm.xla_device())
        opt = th.optim.Adam(net.parameters())
        for batch in loader:
            inputs, targets = net.parse_batch(batch)
            opt.zero_grad()
            th.nn.functional.mse_loss(net(inputs), targets).backward()
            xm.optimizer_step(opt)
            xm.mark_step()
        """,
            target="sagemaker",
            note="batches-made-by-a-method-of-another-module-sagemaker",
            alias=True,
            findings=(
                Expected(8, 23, "`inputs` reaches `net` (on the XLA device) from `net.parse_batch()` in model.py"),
            ),
        ),
        invalid(
            """
        import torch as th

        net = th.nn.Linear(4, 2).cuda()
        opt = th.optim.Adam(net.parameters())
        for n_id, adjs in train_loader:
            adjs = [adj.cuda() for adj in adjs]
            loss = net(adjs).pow(2).mean()
        for n_id, adjs in train_loader:
            print(net(adjs))
        """,
            """
        import torch as th
        import torch_xla.core.xla_model as xm

        net = th.nn.Linear(4, 2).to(xm.xla_device())
        opt = th.optim.Adam(net.parameters())
        for n_id, adjs in train_loader:
            adjs = [adj.to(xm.xla_device()) for adj in adjs]
            loss = net(adjs).pow(2).mean()
            xm.mark_step()
        for n_id, adjs in train_loader:
            print(net(adjs))
        """,
            target="sagemaker",
            alias=True,
            note="training-loop-moves-by-comprehension",
            findings=(
                Expected(
                    11, 11, "`adjs` reaches `net` (on the XLA device) on the CPU: `train_loader` yields CPU tensors"
                ),
            ),
        ),
        invalid(
            """
        import torch as th

        net = th.nn.Linear(4, 2).cuda()
        opt = th.optim.Adam(net.parameters())
        for i, (x, y) in enumerate(train_loader):
            x, y = x.cuda(), y.cuda()
            loss = (net(x) - y).pow(2).mean()
        for i, (x, y) in enumerate(train_loader):
            print(net(x))
        """,
            """
        import torch as th
        import torch_xla.core.xla_model as xm

        net = th.nn.Linear(4, 2).to(xm.xla_device())
        opt = th.optim.Adam(net.parameters())
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(xm.xla_device()), y.to(xm.xla_device())
            loss = (net(x) - y).pow(2).mean()
            xm.mark_step()
        for i, (x, y) in enumerate(train_loader):
            print(net(x))
        """,
            target="sagemaker",
            alias=True,
            findings=(
                Expected(11, 11, "`x` reaches `net` (on the XLA device) on the CPU: `train_loader` yields CPU tensors"),
            ),
        ),
        invalid(
            """
        import torch

        torch.set_default_tensor_type("torch.cuda.FloatTensor")
        model = torch.nn.Linear(4, 2).cuda()
        x = torch.Tensor([[1.0, 2.0, 3.0, 4.0]])
        print(model(x))
        """,
            """
        import torch
        import torch_xla

        torch.set_default_tensor_type("torch.cuda.FloatTensor")
        model = torch.nn.Linear(4, 2).to(torch_xla.device())
        x = torch.Tensor([[1.0, 2.0, 3.0, 4.0]])
        print(model(x))
        """,
            note="default-cuda-tensor-type",
            findings=(Expected(4, 1, "stays: without CUDA it fails"),),
        ),
        invalid(
            """
        import torch


        def train_one_epoch(model, data_loader, optimizer, epoch):
            data_loader.sampler.set_epoch(epoch)
            for examples, labels in data_loader:
                loss = model(examples, labels)
                loss.backward()
                optimizer.step()


        device = torch.device("cuda")
        model = torch.nn.Linear(4, 4).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(train_set, batch_size=8)
        for epoch in range(3):
            train_one_epoch(model, loader, optimizer, epoch)
        """,
            """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm


        def train_one_epoch(model, data_loader, optimizer, epoch):
            data_loader.sampler.set_epoch(epoch)
            for examples, labels in data_loader:
                loss = model(examples, labels)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()


        device = torch_xla.device()
        model = torch.nn.Linear(4, 4).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(train_set, batch_size=8)
        for epoch in range(3):
            train_one_epoch(model, loader, optimizer, epoch)
        """,
            note="handed-loader-used-otherwise-than-iterated",
            findings=(
                Expected(
                    20,
                    5,
                    "`loader` goes to `train_one_epoch` (in this file), which feeds the batches of its `data_loader` "
                    "(`examples`, `labels`) to `model` (on the XLA device) without moving them; it uses `data_loader` "
                    "otherwise than by iterating it",
                ),
            ),
        ),
        invalid(
            """
        import numpy as np
        import torch


        def validate(model, data_loader):
            for images, meta in data_loader:
                out = model(images)
                centers = meta["center"].numpy()
                scores = np.asarray(meta["score"].detach())
                print(out, centers, scores)


        model = torch.nn.Linear(4, 4).cuda()
        loader = torch.utils.data.DataLoader(val_set, batch_size=8)
        validate(model, loader)
        """,
            """
        import numpy as np
        import torch
        import torch_xla


        def validate(model, data_loader):
            for images, meta in data_loader:
                out = model(images)
                centers = meta["center"].numpy()
                scores = np.asarray(meta["score"].detach())
                print(out, centers, scores)


        model = torch.nn.Linear(4, 4).to(torch_xla.device())
        loader = torch.utils.data.DataLoader(val_set, batch_size=8)
        validate(model, loader)
        """,
            note="handed-loader-batch-read-on-the-host",
            findings=(
                Expected(
                    16,
                    1,
                    "`loader` goes to `validate` (in this file), which feeds the batches of its `data_loader` "
                    "(`images`) to `model` (on the XLA device) without moving them; it also reads parts of each "
                    'batch on the host (`meta["center"].numpy()`, `np.asarray(meta["score"].detach())`), which a '
                    "device loader would move",
                ),
            ),
        ),
        invalid(
            """
        import numpy as onp
        import torch as th


        def validate(net, batches):
            for images, meta in batches:
                print(net(images), onp.array(meta))


        net = th.nn.Linear(4, 4).cuda()
        val_loader = th.utils.data.DataLoader(val_set, batch_size=8)
        validate(net, val_loader)
        """,
            """
        import numpy as onp
        import torch as th
        import torch_xla


        def validate(net, batches):
            for images, meta in batches:
                print(net(images), onp.array(meta))


        net = th.nn.Linear(4, 4).to(torch_xla.device())
        val_loader = th.utils.data.DataLoader(val_set, batch_size=8)
        validate(net, val_loader)
        """,
            alias=True,
            note="handed-loader-batch-read-on-the-host-aliased",
            findings=(Expected(13, 1, "it also reads parts of each batch on the host (`onp.array(meta)`)"),),
        ),
        invalid(
            """
        import torch as th


        def evaluate(net, batches):
            for inputs, targets in batches:
                print(net(inputs), targets)


        net = th.nn.Linear(4, 2).cuda()
        evaluate(net, th.utils.data.DataLoader(val_set, batch_size=4))
        """,
            """
        import torch as th
        import torch_xla.core.xla_model as xm


        def evaluate(net, batches):
            for inputs, targets in batches:
                print(net(inputs), targets)


        net = th.nn.Linear(4, 2).to(xm.xla_device())
        evaluate(net, th.utils.data.DataLoader(val_set, batch_size=4))
        """,
            target="sagemaker",
            alias=True,
            note="handed-loader-built-in-the-call",
            findings=(
                Expected(
                    11,
                    1,
                    "`th.utils.data.DataLoader(val_set, batch_size=4)` goes to `evaluate` (in this file), which feeds "
                    "the batches of its `batches` (`inputs`) to `net` (on the XLA device) without moving them; the "
                    "loader is built in the call",
                ),
            ),
        ),
        # A CUDA device count decides the batch move and an else does something else: reported.
        invalid(
            """
        import torch

        n_gpu = torch.cuda.device_count()
        device = torch.device("cuda")
        model = model.to(device)
        for batch in loader:
            if n_gpu == 1:
                batch = tuple(t.to(device) for t in batch)
            else:
                print("DDP moves the inputs")
            model(*batch).sum().backward()
        """,
            """
        import torch
        import torch_xla

        n_gpu = torch.cuda.device_count()
        device = torch_xla.device()
        model = model.to(device)
        for batch in loader:
            if n_gpu == 1:
                batch = tuple(t.to(device) for t in batch)
            else:
                print("DDP moves the inputs")
            model(*batch).sum().backward()
            torch_xla.sync()
        """,
            note="a-device-count-decides-the-batch-move-with-an-else",
            findings=(
                Expected(
                    8,
                    8,
                    "the batches move to the device only `if n_gpu == 1`: `n_gpu` is 0 on an XLA host (no CUDA "
                    "device there), so `n_gpu == 1` is False on XLA",
                ),
            ),
        ),
    )
