"""Before/after cases for every rule: positive (the rule fires), negative (code it
must leave alone) and alias (the same construct reached through import aliases).

``after`` is the expected conversion; None means the code must come back unchanged
(report-only rules, negative cases).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    rule: str
    kind: str  # "positive" | "negative" | "alias"
    before: str
    after: str | None = None
    target: str = "2.9"
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.kind}-{self.note or 'case'}"


def C(rule: str, kind: str, before: str, after: str | None = None, *, target: str = "2.9", note: str = "") -> Case:
    clean = lambda s: textwrap.dedent(s).lstrip("\n")  # noqa: E731
    return Case(rule, kind, clean(before), None if after is None else clean(after), target, note)


CASES = [
    # -- XLA001 imports ---------------------------------------------------------
    C("XLA001", "positive", """
        \"\"\"Trainer.\"\"\"
        import os
        import torch
        import numpy as np

        model = torch.nn.Linear(2, 2)
        torch.save(model.state_dict(), "m.pt")
        """, """
        \"\"\"Trainer.\"\"\"
        import os
        import torch
        import torch_xla.core.xla_model as xm
        import numpy as np

        model = torch.nn.Linear(2, 2)
        xm.save(model.state_dict(), "m.pt")
        """, note="after-torch-import"),
    C("XLA001", "negative", """
        import torch
        import torch_xla.core.xla_model as xm

        torch.save(model.state_dict(), "m.pt")
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.save(model.state_dict(), "m.pt")
        """, note="already-imported"),
    C("XLA001", "negative", """
        import torch
        from torch_xla.core import xla_model as xmod

        torch.save(state, "m.pt")
        """, """
        import torch
        from torch_xla.core import xla_model as xmod

        xmod.save(state, "m.pt")
        """, note="existing-alias-honoured"),
    C("XLA001", "alias", """
        import torch as th
        import torch.nn as nn

        th.save(state, "m.pt")
        """, """
        import torch as th
        import torch.nn as nn
        import torch_xla.core.xla_model as xm

        xm.save(state, "m.pt")
        """),
    C("XLA001", "positive", """
        import torch

        xm = build_experiment_manager()
        torch.save(state, "m.pt")
        """, """
        import torch
        import torch_xla.core.xla_model

        xm = build_experiment_manager()
        torch_xla.core.xla_model.save(state, "m.pt")
        """, note="alias-taken"),
    C("XLA001", "positive", """
        import torch
        import pytorch_lightning as pl

        device = torch.device("cuda")
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss_fn(model(x), y).backward()
        """, """
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader
        import pytorch_lightning as pl

        device = torch_xla.device()
        for x, y in torch_xla.distributed.parallel_loader.MpDeviceLoader(train_loader, device):
            x, y = x.to(device), y.to(device)
            loss_fn(model(x), y).backward()
        """, note="alias-bound-by-an-unused-import"),
    C("XLA001", "positive", """
        import torch

        def get_device():
            import torch_xla.core.xla_model as xm
            return xm.xla_device()

        def step(optimizer):
            optimizer.step()
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model

        def get_device():
            import torch_xla.core.xla_model as xm
            return torch_xla.device()

        def step(optimizer):
            torch_xla.core.xla_model.optimizer_step(optimizer)
        """, note="function-local-import-is-not-module-wide"),
    # -- XLA002 stale imports ---------------------------------------------------
    C("XLA002", "positive", """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
        """, """
        import torch
        import torch_xla

        device = torch_xla.device()
        """),
    C("XLA002", "negative", """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import json

        device = xm.xla_device()
        xm.master_print("ready")
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import json

        device = torch_xla.device()
        xm.master_print("ready")
        """, note="still-used-and-untouched-unused"),
    C("XLA002", "negative", """
        import os
        import torch

        device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
        os.makedirs("out", exist_ok=True)
        """, """
        import os
        import torch
        import torch_xla

        device = torch_xla.device()
        os.makedirs("out", exist_ok=True)
        """, note="name-still-used-after-a-replacement"),
    C("XLA002", "alias", """
        import torch
        from torch.cuda import synchronize, empty_cache

        synchronize()
        empty_cache()
        """, """
        import torch
        from torch.cuda import empty_cache
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        empty_cache()
        """, note="from-import-name"),
    # -- XLA003 cross-file ------------------------------------------------------
    C("XLA003", "positive", """
        import torch
        from helpers import get_device

        device = get_device()
        """),
    C("XLA003", "positive", """
        import torch
        from engine import train_one_epoch

        optimizer = torch.optim.AdamW(params)
        for epoch in range(10):
            train_one_epoch(model, loader, optimizer, epoch)
        """, note="training-step-in-another-file"),
    C("XLA003", "negative", """
        import torch

        def get_device():
            return torch.device("cpu")

        device = get_device()
        """, note="defined-here"),
    C("XLA003", "alias", """
        import torch
        from .utils import pick_device as pd

        device = pd()
        """, note="relative-import"),
    # -- XLA101 CUDA devices ----------------------------------------------------
    C("XLA101", "positive", """
        import torch

        device = torch.device("cuda")
        noise = torch.randn(3, device="cuda:1")
        """, """
        import torch
        import torch_xla

        device = torch_xla.device()
        noise = torch.randn(3, device="xla")
        """),
    C("XLA101", "positive", """
        import torch

        parser.add_argument('--device', default='cuda')
        local = torch.device(f"cuda:{rank}")
        """, """
        import torch
        import torch_xla

        parser.add_argument('--device', default='xla')
        local = torch_xla.device()
        """, note="cli-default-and-fstring"),
    C("XLA101", "negative", """
        import torch

        device = torch.device("cpu")
        print("cuda")
        backend_type = "cuda"
        """, note="cpu-and-non-device-strings"),
    C("XLA101", "negative", """
        import torch
        import torch_xla.core.xla_model as xm

        device = xm.xla_device() if USE_XLA else torch.device("cuda")
        if args.tpu:
            device = xm.xla_device()
        else:
            device = torch.device("cuda")
        """, note="xla-aware-branches"),
    C("XLA101", "alias", """
        import torch as th

        dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
        """, """
        import torch as th
        import torch_xla

        dev = torch_xla.device()
        """),
    C("XLA101", "positive", """
        import torch

        device = torch.device("cuda")
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
        """, target="sagemaker", note="sagemaker"),
    # -- XLA102 .cuda() -----------------------------------------------------------
    C("XLA102", "positive", """
        import torch

        model = Net().cuda()
        x = x.cuda(non_blocking=True)
        """, """
        import torch
        import torch_xla

        model = Net().to(torch_xla.device())
        x = x.to(torch_xla.device(), non_blocking=True)
        """),
    C("XLA102", "negative", """
        import torch

        use_gpu = torch.cuda.is_available()
        x = x.to("cpu")
        """),
    C("XLA102", "alias", """
        import torch
        import torch_xla as tx

        model.cuda()
        """, """
        import torch
        import torch_xla as tx

        model.to(tx.device())
        """, note="existing-torch_xla-alias"),
    # -- XLA103 integer devices ---------------------------------------------------
    C("XLA103", "positive", """
        import torch

        device = 0
        model.to(device)
        """, """
        import torch
        import torch_xla

        device = torch_xla.device()
        model.to(device)
        """),
    C("XLA103", "negative", """
        import torch

        epochs = 0
        x = x.to(dtype)
        y = y.to(torch.float16)
        """),
    C("XLA103", "positive", """
        import torch

        rank = 0
        torch.cuda.set_device(rank)
        model = model.to(rank)
        if rank == 0:
            torch.save(model.state_dict(), "ckpt.pt")
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        rank = 0
        model = model.to(torch_xla.device())
        if rank == 0:
            xm.save(model.state_dict(), "ckpt.pt")
        """, note="rank-stays-a-number"),
    C("XLA103", "alias", """
        import torch as th

        model = model.cuda(args.gpu)
        batch = batch.to(args.gpu)
        """, """
        import torch as th
        import torch_xla

        model = model.to(torch_xla.device())
        batch = batch.to(torch_xla.device())
        """, note="index-seen-in-cuda-call"),
    # -- XLA104 availability picks the device -------------------------------------
    C("XLA104", "positive", """
        import torch

        use_cuda = not args.no_cuda and torch.cuda.is_available()
        device = torch.device("cuda" if use_cuda else "cpu")
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        use_cuda = not args.no_cuda
        device = torch.device("xla" if use_cuda else "cpu")
        """, note="flag"),
    C("XLA104", "positive", """
        import torch

        if torch.cuda.is_available():
            # move the model to the GPU
            model.cuda()
        else:
            print("cpu only")
        """, """
        import torch
        import torch_xla

        # move the model to the GPU
        model.to(torch_xla.device())
        """, note="if-statement"),
    C("XLA104", "positive", """
        import torch

        cuda = True if torch.cuda.is_available() else False
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        """, note="flag-blocked-by-cuda-only-code"),
    C("XLA104", "positive", """
        import torch

        for x, y in loader:
            if torch.cuda.is_available():  # move the batch
                x = x.cuda()
                # the targets stay on the host
            else:
                x = x.float()
                # nothing to move
            print(x)
        """, """
        import torch
        import torch_xla

        for x, y in loader:
            # move the batch
            x = x.to(torch_xla.device())
            # the targets stay on the host
            print(x)
        """, note="unwrapped-block-keeps-its-comments"),
    C("XLA104", "positive", """
        import torch

        for x in loader:
            if torch.cuda.is_available():
                x = x.cuda()
            elif torch.cuda.device_count() == 0:
                x = x.float()
            # LibCST gives this line to the elif's block
                # and this one
            print(x)
        """, """
        import torch
        import torch_xla

        for x in loader:
            x = x.to(torch_xla.device())
            # LibCST gives this line to the elif's block
            # and this one
            print(x)
        """, note="removed-branch-keeps-the-comments-after-it"),
    C("XLA104", "positive", """
        import torch

        use_accel = not args.no_accel and torch.accelerator.is_available()
        if use_accel:
            device = torch.accelerator.current_accelerator()
        else:
            device = torch.device("cpu")
        """, """
        import torch
        import torch_xla

        use_accel = not args.no_accel
        if use_accel:
            device = torch_xla.device()
        else:
            device = torch.device("cpu")
        """, note="torch-accelerator"),
    C("XLA104", "positive", """
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        """, note="guard-of-ported-code"),
    C("XLA104", "positive", """
        import torch

        if args.mps:
            device = torch.device("mps")
        elif torch.cuda.is_available():  # GPU
            device = torch.device("cuda")
        else:
            device = torch.device("cpu")
        """, """
        import torch
        import torch_xla

        if args.mps:
            device = torch.device("mps")
        else:  # GPU
            device = torch_xla.device()
        """, note="elif"),
    C("XLA104", "positive", """
        import torch

        def warm_up():
            if not torch.cuda.is_available():
                torch.cuda.synchronize()
        """, """
        import torch

        def warm_up():
            pass
        """, note="branch-that-never-runs-is-removed"),
    C("XLA104", "positive", """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"  # xla-codemod: ignore[XLA101]
        """, note="suppressed-device-keeps-its-check"),
    C("XLA104", "negative", """
        import torch

        pin = torch.cuda.is_available()
        loader = DataLoader(ds, pin_memory=pin)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(0)
        """, note="not-a-device-choice"),
    C("XLA104", "alias", """
        import torch as th

        device = 'cuda' if th.cuda.is_available() else 'cpu'
        """, """
        import torch as th
        import torch_xla  # noqa: F401  (registers the "xla" device)

        device = 'xla'
        """),
    # -- XLA105 CUDA checks ---------------------------------------------------------
    C("XLA105", "positive", """
        import torch

        if x.is_cuda:
            x = x.half()
        if device == 'cuda':
            cudnn.benchmark = True
        """),
    C("XLA105", "positive", """
        import torch

        use_amp = torch.cuda.is_available()
        """, note="availability-kept"),
    C("XLA105", "negative", """
        import torch

        if device.type == 'xla':
            pass
        """),
    C("XLA105", "alias", """
        import torch as th

        on_gpu = 'cuda:0' == str(th.device(args.device))
        """),
    # -- XLA106 set_device ----------------------------------------------------------
    C("XLA106", "positive", """
        import torch

        def setup(gpu):
            # pin this process to its GPU
            torch.cuda.set_device(gpu)
        """, """
        import torch

        def setup(gpu):
            # pin this process to its GPU
            pass
        """, note="only-statement"),
    C("XLA106", "negative", """
        import torch

        xla_runtime.set_device(0)
        """),
    C("XLA106", "alias", """
        import torch
        from torch.cuda import set_device

        set_device(args.local_rank)
        train()
        """, """
        import torch

        train()
        """),
    # -- XLA107 typed CUDA tensors ----------------------------------------------------
    C("XLA107", "positive", """
        import torch

        idx = torch.cuda.LongTensor(4).zero_()
        """, """
        import torch
        import torch_xla

        idx = torch.LongTensor(4).to(torch_xla.device()).zero_()
        """),
    C("XLA107", "negative", """
        import torch

        idx = torch.LongTensor(4).zero_()
        """),
    C("XLA107", "alias", """
        import torch as th

        w = th.cuda.FloatTensor(2, 2)
        """, """
        import torch as th
        import torch_xla

        w = th.FloatTensor(2, 2).to(torch_xla.device())
        """),
    # -- XLA201 optimizer step --------------------------------------------------------
    C("XLA201", "positive", """
        import torch

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.step()
        loss = lbfgs_optimizer.step(closure)
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        xm.optimizer_step(optimizer)
        loss = xm.optimizer_step(lbfgs_optimizer, optimizer_args={"closure": closure})
        """),
    C("XLA201", "positive", """
        import torch

        def train(model, opt, loader, env):
            for x in loader:
                model(x).sum().backward()
                opt.step()
                env.step(action)
                warmup.step()
        """, """
        import torch
        import torch_xla

        def train(model, opt, loader, env):
            for x in loader:
                model(x).sum().backward()
                opt.step()
                env.step(action)
                warmup.step()
                torch_xla.sync()
        """, note="unrecognized-step-reported"),
    C("XLA201", "negative", """
        import torch

        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
        scheduler.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        """),
    C("XLA201", "negative", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        optimizer.step()
        """, note="ddp-reduces-itself"),
    C("XLA201", "positive", """
        import torch

        device = torch.device("cuda")
        if not torch.cuda.is_available():
            x = x.cuda()
            model = torch.nn.parallel.DistributedDataParallel(model)
        optimizer.step()
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        device = torch_xla.device()
        xm.optimizer_step(optimizer)
        """, note="ddp-only-in-a-removed-branch"),
    C("XLA201", "positive", """
        import torch

        model = torch.nn.DataParallel(model)
        optimizer.step()
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        model = torch.nn.DataParallel(model)
        xm.optimizer_step(optimizer)
        """, note="dataparallel-does-not-reduce"),
    C("XLA201", "alias", """
        import torch.optim as O

        opt = O.Adam(params)
        opt.step()
        """, """
        import torch.optim as O
        import torch_xla.core.xla_model as xm

        opt = O.Adam(params)
        xm.optimizer_step(opt)
        """),
    # -- XLA202 AMP -----------------------------------------------------------------------
    C("XLA202", "positive", """
        import torch

        with torch.cuda.amp.autocast():
            out = model(x)
        """),
    C("XLA202", "negative", """
        import torch

        with torch.no_grad():
            out = model(x)
        """),
    C("XLA202", "alias", """
        import torch
        from torch.cuda.amp import GradScaler as GS

        scaler = GS()
        """),
    # -- XLA203 optimizer built before the model moves ----------------------------------------
    C("XLA203", "positive", """
        import torch

        class Trainer:
            def __init__(self, model, optimizer, gpu_id):
                self.model = model.to(gpu_id)
                self.optimizer = optimizer

        def load_train_objs():
            model = torch.nn.Linear(20, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
            return model, optimizer

        device = torch.device("cuda")
        """, """
        import torch
        import torch_xla

        class Trainer:
            def __init__(self, model, optimizer, gpu_id):
                self.model = model.to(gpu_id)
                self.optimizer = optimizer

        def load_train_objs():
            model = torch.nn.Linear(20, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=1e-3)
            return model, optimizer

        device = torch_xla.device()
        """, note="moved-by-a-trainer-class"),
    C("XLA203", "positive", """
        import torch

        device = torch.device("cuda" if use_cuda else "cpu")
        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.to(device)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        device = torch.device("xla" if use_cuda else "cpu")
        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.to(device)
        """, note="cpu-fallback-reported"),
    C("XLA203", "negative", """
        import torch

        model = torch.nn.Linear(2, 2).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        other = torch.nn.Linear(2, 2)
        other = other.to(device)
        other_optimizer = torch.optim.SGD(other.parameters(), lr=0.1)
        """, note="moved-first"),
    C("XLA203", "negative", """
        import torch

        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        """, note="never-moved"),
    C("XLA203", "alias", """
        from torch import nn, optim

        class Net(nn.Module):
            pass

        net = Net()
        opt = optim.Adam(net.parameters())
        net.cuda()
        """, """
        from torch import nn, optim
        import torch_xla

        class Net(nn.Module):
            pass

        net = Net()
        opt = optim.Adam(net.to(torch_xla.device()).parameters())
        net.to(torch_xla.device())
        """),
    # -- XLA301 training loop barrier ---------------------------------------------------------
    C("XLA301", "positive", """
        import torch

        for step in range(100):
            x, y = get_batch()
            if x is None:
                continue
            loss = model(x, y)
            loss.backward()
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-0.1)
        """, """
        import torch
        import torch_xla

        for step in range(100):
            x, y = get_batch()
            if x is None:
                torch_xla.sync()
                continue
            loss = model(x, y)
            loss.backward()
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-0.1)
            torch_xla.sync()
        """, note="manual-update-and-continue"),
    C("XLA301", "positive", """
        import torch

        class Trainer:
            def _run_batch(self, x):
                self.optimizer.zero_grad()
                self.model(x).sum().backward()
                self.optimizer.step()

            def run(self):
                while self.running:
                    self._run_batch(next(self.batches))
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        class Trainer:
            def _run_batch(self, x):
                self.optimizer.zero_grad()
                self.model(x).sum().backward()
                xm.optimizer_step(self.optimizer)

            def run(self):
                while self.running:
                    self._run_batch(next(self.batches))
                    torch_xla.sync()
        """, note="step-method"),
    C("XLA301", "negative", """
        import torch
        import torch_xla

        for x in batches:
            model(x).sum().backward()
            torch_xla.sync()
        for epoch in range(3):
            print(epoch)
        """, note="has-barrier-and-no-training"),
    C("XLA301", "alias", """
        import torch as th

        for x in batches:
            th.autograd.backward(model(x).sum())
        """, """
        import torch as th
        import torch_xla.core.xla_model as xm

        for x in batches:
            th.autograd.backward(model(x).sum())
            xm.mark_step()
        """, target="sagemaker"),
    # -- XLA302 MpDeviceLoader ----------------------------------------------------------------
    C("XLA302", "positive", """
        import torch

        device = torch.device("cuda")
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            loss_fn(model(x), y).backward()
        """, """
        import torch
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl

        device = torch_xla.device()
        for i, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, device)):
            x, y = x.to(device), y.to(device)
            loss_fn(model(x), y).backward()
        """),
    C("XLA302", "negative", """
        import torch

        if args.cpu:
            device = torch.device("cpu")
        else:
            device = torch.device("cuda")
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss_fn(model(x), y).backward()
        """, """
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
        """, note="cpu-path-keeps-barrier"),
    C("XLA302", "alias", """
        import torch as th

        dev = th.device('cuda' if th.cuda.is_available() else 'cpu')
        for (batch,) in self.train_loader:
            batch = batch.to(dev)
            model(batch).sum().backward()
        """, """
        import torch as th
        import torch_xla
        import torch_xla.distributed.parallel_loader as pl

        dev = torch_xla.device()
        for (batch,) in pl.MpDeviceLoader(self.train_loader, dev):
            batch = batch.to(dev)
            model(batch).sum().backward()
        """),
    # -- XLA303 evaluation loop barrier -----------------------------------------------------------
    C("XLA303", "positive", """
        import torch

        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum()
        """, """
        import torch
        import torch_xla

        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum()
                torch_xla.sync()
        """),
    C("XLA303", "negative", """
        import torch

        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(1) == y).sum().item()
        """, note="reads-every-iteration"),
    C("XLA303", "alias", """
        import torch as th

        for x in val_batches:
            total = total + model(x.cuda()).sum()
        """, """
        import torch as th
        import torch_xla

        for x in val_batches:
            total = total + model(x.to(torch_xla.device())).sum()
            torch_xla.sync()
        """),
    # -- XLA304 closure barrier ----------------------------------------------------------------------
    C("XLA304", "positive", """
        import torch

        def closure():
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            return loss

        optimizer.step(closure)
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        def closure():
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            torch_xla.sync()
            return loss

        xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
        """),
    C("XLA304", "negative", """
        import torch

        def closure():
            return criterion(model(x), y)

        print(closure())
        """),
    C("XLA304", "alias", """
        import torch.optim as O

        opt = O.LBFGS(params)

        def fit():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        opt.step(closure=fit)
        """, """
        import torch.optim as O
        import torch_xla.core.xla_model as xm

        opt = O.LBFGS(params)

        def fit():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            xm.mark_step()
            return loss

        xm.optimizer_step(opt, optimizer_args={"closure": fit})
        """, target="sagemaker"),
    # -- XLA401 xm.save -----------------------------------------------------------------------------
    C("XLA401", "positive", """
        import torch

        def save_checkpoint(state, filename="checkpoint.pth.tar"):
            torch.save(state, filename)
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        def save_checkpoint(state, filename="checkpoint.pth.tar"):
            xm.save(state, filename)
        """),
    C("XLA401", "negative", """
        import torch
        import numpy as np

        np.save("x.npy", arr)
        state = torch.load("m.pt")
        """),
    C("XLA401", "positive", """
        import torch

        torch.save(obj=state, f="b.pt")
        torch.save(state, "c.pt", pickle_protocol=4)
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.save(data=state, file_or_path="b.pt")
        torch.save(state, "c.pt", pickle_protocol=4)
        """, note="keywords"),
    C("XLA401", "alias", """
        import torch
        from torch import save

        save(model.state_dict(), buffer)
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.save(model.state_dict(), buffer)
        """),
    # -- XLA402 whole module -------------------------------------------------------------------------
    C("XLA402", "positive", """
        import torch
        import torch_xla.core.xla_model as xm

        class Net(torch.nn.Module):
            pass

        model = Net().to(device)
        torch.save(model, "full.pt")
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        class Net(torch.nn.Module):
            pass

        model = Net().to(device)
        xm.save(model, "full.pt")
        """),
    C("XLA402", "negative", """
        import torch
        import torch_xla.core.xla_model as xm

        model = Net()
        xm.save(model.state_dict(), "weights.pt")
        """),
    C("XLA402", "alias", """
        import torch as th
        import torch_xla.core.xla_model as xm
        from torch import nn

        net = nn.Sequential(nn.Linear(2, 2))
        th.save(net, "net.pt")
        """, """
        import torch as th
        import torch_xla.core.xla_model as xm
        from torch import nn

        net = nn.Sequential(nn.Linear(2, 2))
        xm.save(net, "net.pt")
        """),
    # -- XLA403 torch.load map_location -----------------------------------------------------------
    C("XLA403", "positive", """
        import torch

        loc = 'cuda:{}'.format(args.gpu)
        checkpoint = torch.load(args.resume, map_location=loc)
        state = torch.load("m.pt", map_location=device)
        other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
        """, """
        import torch

        loc = 'cuda:{}'.format(args.gpu)
        checkpoint = torch.load(args.resume, map_location="cpu")
        state = torch.load("m.pt", map_location="cpu")
        other = torch.load("o.pt", map_location={"cuda:1": "cuda:0"})
        """),
    C("XLA403", "negative", """
        import torch

        state = torch.load("m.pt", map_location="cpu")
        other = torch.load("o.pt", map_location=lambda storage, loc: storage)
        """),
    C("XLA403", "alias", """
        import torch as th

        state = th.load("m.pt", map_location=th.device("cuda"))
        """, """
        import torch as th

        state = th.load("m.pt", map_location="cpu")
        """),
    # -- XLA5xx CUDA runtime ------------------------------------------------------------------------------
    C("XLA501", "positive", """
        import torch

        torch.cuda.synchronize()
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        """),
    C("XLA501", "negative", """
        import torch
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        """, note="already-xla"),
    C("XLA501", "positive", """
        import torch

        torch.cuda.synchronize(device)
        """, note="with-argument-reported"),
    C("XLA501", "alias", """
        import torch as th

        th.cuda.synchronize()
        """, """
        import torch as th
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        """),
    C("XLA502", "positive", """
        import torch

        torch.backends.cudnn.benchmark = True
        loader = DataLoader(ds, pin_memory=True)
        torch.cuda.empty_cache()
        """),
    C("XLA502", "negative", """
        import torch

        loader = DataLoader(ds, pin_memory=False)
        """),
    C("XLA502", "alias", """
        import torch
        import torch.backends.cudnn as cudnn

        cudnn.benchmark = True
        kwargs = {'num_workers': 1, 'pin_memory': True}
        """),
    C("XLA503", "positive", """
        import torch

        print(torch.cuda.memory_allocated() / 2**20)
        """),
    C("XLA503", "negative", """
        import torch
        import torch_xla.core.xla_model as xm

        print(xm.get_memory_info(device))
        """),
    C("XLA503", "alias", """
        import torch
        from torch.cuda import max_memory_allocated as peak

        print(peak())
        """),
    C("XLA504", "positive", """
        import torch

        try:
            step()
        except torch.cuda.OutOfMemoryError:
            shrink_batch()
        """),
    C("XLA504", "negative", """
        import torch

        try:
            step()
        except RuntimeError:
            shrink_batch()
        """),
    C("XLA504", "alias", """
        import torch as th

        try:
            step()
        except th.cuda.OutOfMemoryError:
            pass
        """),
    C("XLA505", "positive", """
        import torch

        torch.cuda.manual_seed_all(args.seed)
        """),
    C("XLA505", "negative", """
        import torch

        torch.manual_seed(args.seed)
        """),
    C("XLA505", "alias", """
        import torch.cuda as tc

        tc.manual_seed(1)
        """),
    C("XLA506", "positive", """
        import torch

        print(torch.cuda.get_device_name(0))
        """),
    C("XLA506", "positive", """
        import torch

        state = torch.cuda.get_rng_state()
        """, note="any-other-torch-cuda-api"),
    C("XLA506", "negative", """
        import torch

        print(torch.__version__)
        """),
    C("XLA506", "alias", """
        import torch
        from torch.cuda import device_count

        ngpus = device_count()
        """),
    # -- XLA601 distributed -----------------------------------------------------------------------------------
    C("XLA601", "positive", """
        import torch

        torch.distributed.init_process_group("nccl")
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        """),
    C("XLA601", "negative", """
        import torch

        rank = torch.distributed.get_rank()
        """),
    C("XLA601", "alias", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        """),
    # -- XLA901 torch_xla release names ---------------------------------------------------------------------
    C("XLA901", "positive", """
        import torch_xla
        import torch_xla.core.xla_model as xm

        world_size = xm.xrt_world_size()
        xm.master_print(world_size)
        """, """
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr

        world_size = xr.world_size()
        xm.master_print(world_size)
        """),
    C("XLA901", "positive", """
        import torch
        import torch_xla

        device = torch_xla.device()
        torch_xla.sync()
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
        xm.mark_step()
        """, target="sagemaker", note="sagemaker-downgrade"),
    C("XLA901", "negative", """
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr

        device = torch_xla.device()
        rank = xr.global_ordinal()
        xm.master_print(rank)
        """, note="target-names"),
    C("XLA901", "positive", """
        import torch_xla.core.xla_model as xm

        second = xm.xla_device(n=1)
        """, note="arguments-reported"),
    C("XLA901", "alias", """
        import torch_xla
        from torch_xla.core import xla_model as xmm

        xmm.mark_step()
        """, """
        import torch_xla

        torch_xla.sync()
        """),
]
