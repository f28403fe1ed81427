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
    filename: str = "train.py"  # what kind of file (a launcher, a Dockerfile)
    # Findings of ``rule`` the case must give: (line in the output, text in the message).
    expect: tuple[tuple[int, str], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.kind}-{self.note or 'case'}"


def C(
    rule: str,
    kind: str,
    before: str,
    after: str | None = None,
    *,
    target: str = "2.9",
    note: str = "",
    filename: str = "train.py",
    expect: tuple[tuple[int, str], ...] = (),
) -> Case:
    clean = lambda s: textwrap.dedent(s).lstrip("\n")  # noqa: E731
    return Case(rule, kind, clean(before), None if after is None else clean(after), target, note, filename, expect)


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
        from torch.cuda import synchronize, memory_allocated

        synchronize()
        print(memory_allocated())
        """, """
        import torch
        from torch.cuda import memory_allocated
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
        print(memory_allocated())
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
    C("XLA003", "negative", """
        import torch
        import torch_xla

        def train_one_epoch(model, loader, optimizer, loss_scaler):
            for x in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x)
                loss_scaler(loss, optimizer, parameters=model.parameters())
                torch_xla.sync()
        """, note="step-wrapper-passed-in-names-no-file"),
    C("XLA301", "positive", """
        import torch
        from util.misc import NativeScaler

        loss_scaler = NativeScaler()
        for x in loader:
            loss = model(x)
            loss_scaler(loss, optimizer)
        """, """
        import torch
        import torch_xla
        from util.misc import NativeScaler

        loss_scaler = NativeScaler()
        for x in loader:
            loss = model(x)
            loss_scaler(loss, optimizer)
            torch_xla.sync()
        """, note="step-wrapper-is-a-training-step"),
    C("XLA301", "positive", """
        import torch

        def backward_and_step(loss, optimizer, scaler):
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        class Trainer:
            def _run_batch(self, x):
                loss = self.model(x)
                backward_and_step(loss, self.optimizer, self.scaler)

            def train(self):
                for x in self.loader:
                    self._run_batch(x)
        """, """
        import torch
        import torch_xla

        def backward_and_step(loss, optimizer, scaler):
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

        class Trainer:
            def _run_batch(self, x):
                loss = self.model(x)
                backward_and_step(loss, self.optimizer, self.scaler)

            def train(self):
                for x in self.loader:
                    self._run_batch(x)
                    torch_xla.sync()
        """, note="step-through-helpers"),
    # -- XLA004 third-party CUDA-only APIs -----------------------------------------------------
    C("XLA004", "positive", """
        import torch
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        """),
    C("XLA004", "negative", """
        import torch
        from timm.scheduler import create_scheduler
        from transformers import get_scheduler

        scheduler, _ = create_scheduler(args, optimizer)
        lr_scheduler = get_scheduler("linear", optimizer, num_warmup_steps=0, num_training_steps=10)
        """, note="schedulers-need-nothing"),
    C("XLA004", "alias", """
        import torch
        import timm.utils as tu

        loss_scaler = tu.NativeScaler()
        """),
    # -- XLA005 no device --------------------------------------------------------------------
    C("XLA005", "positive", """
        import torch

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in data:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        """, note="left-unchanged"),
    C("XLA005", "negative", """
        import torch

        def train(model, optimizer, batches):
            for x, y in batches:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        def train(model, optimizer, batches):
            for x, y in batches:
                optimizer.zero_grad()
                model(x).sum().backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
        """, note="a-training-function-handed-its-model"),
    C("XLA005", "alias", """
        from torch import nn, optim as O

        class Net(nn.Module):
            pass

        net = Net()
        opt = O.LBFGS(net.parameters())
        for step in range(5):
            def closure():
                opt.zero_grad()
                loss = net(x).sum()
                loss.backward()
                return loss
            opt.step(closure)
        """, note="lbfgs"),
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
    # nanoGPT hands its device string to set_device: the name is not an index, and the
    # user's --device=cpu override must keep working.
    C("XLA103", "negative", """
        import sys
        import torch

        device = 'cuda'
        for arg in sys.argv[1:]:
            key, value = arg[2:].split('=')
            globals()[key] = value
        if 'cuda' in device:
            torch.cuda.set_device(device)
        x = torch.zeros(2).to(device)
        """, """
        import sys
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        device = 'xla'
        for arg in sys.argv[1:]:
            key, value = arg[2:].split('=')
            globals()[key] = value
        x = torch.zeros(2).to(device)
        """, note="string-device-given-to-set-device"),
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
    C("XLA103", "positive", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Trainer:
            def __init__(self, model, gpu_id):
                self.gpu_id = gpu_id
                self.model = DDP(model, device_ids=[gpu_id])

            def run(self, source):
                return self.model(source.to(self.gpu_id))
        """, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch_xla

        class Trainer:
            def __init__(self, model, gpu_id):
                self.gpu_id = gpu_id
                self.model = DDP(model)

            def run(self, source):
                return self.model(source.to(torch_xla.device()))
        """, note="an-attribute-that-holds-the-index"),
    C("XLA103", "positive", """
        import torch

        def train(model, batch, gpu):
            return model(batch.to(gpu))

        def worker(rank, model, batch):
            torch.cuda.set_device(rank)
            train(model, batch, rank)
        """, """
        import torch
        import torch_xla

        def train(model, batch, gpu):
            return model(batch.to(torch_xla.device()))

        def worker(rank, model, batch):
            train(model, batch, rank)
        """, note="passed-to-a-parameter"),
    C("XLA103", "positive", """
        import torch

        class Trainer:
            def __init__(self, model, gpu_id):
                self.gpu_id = gpu_id
                self.model = model

            def run(self, source):
                return self.model(source.to(self.gpu_id))
        """, note="named-like-an-index-reported"),
    C("XLA103", "negative", """
        import torch

        def run(model, source, rank):
            rank = "cpu"
            return model(source.to(rank).to(torch.float16))
        """, note="a-string-rank-and-a-dtype"),
    # -- XLA108 input moves guarded by a CUDA index ----------------------------------------
    C("XLA108", "positive", """
        import torch

        if args.gpu is not None:
            model = model.cuda(args.gpu)
        else:
            model = torch.nn.DataParallel(model).cuda()
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
        output = model(images)
        """, """
        import torch
        import torch_xla

        if args.gpu is not None:
            model = model.to(torch_xla.device())
        else:
            model = model.to(torch_xla.device())
        images = images.to(torch_xla.device(), non_blocking=True)
        output = model(images)
        """, note="data-parallel-moved-them"),
    C("XLA108", "positive", """
        import torch

        model.to(device)
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
        output = model(images)
        """, """
        import torch
        import torch_xla

        model.to(device)
        if args.gpu is not None:
            images = images.to(torch_xla.device(), non_blocking=True)
        output = model(images)
        """, note="model-device-may-be-the-cpu-reported"),
    C("XLA108", "negative", """
        import torch

        model = model.cuda(args.gpu)
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
            print("moved")
        output = model(images)
        """, """
        import torch
        import torch_xla

        model = model.to(torch_xla.device())
        if args.gpu is not None:
            images = images.to(torch_xla.device(), non_blocking=True)
            print("moved")
        output = model(images)
        """, note="the-guard-does-more-than-move"),
    C("XLA108", "alias", """
        import torch.nn as tnn

        net = tnn.DataParallel(net).cuda() if args.gpu is None else net.cuda(args.gpu)
        if args.gpu is not None:
            x = x.cuda(args.gpu)
        loss = tnn.functional.mse_loss(net(x), y)
        """, """
        import torch.nn as tnn
        import torch_xla

        net = net.to(torch_xla.device()) if args.gpu is None else net.to(torch_xla.device())
        x = x.to(torch_xla.device())
        loss = tnn.functional.mse_loss(net(x), y)
        """),
    # -- XLA109 device generators ---------------------------------------------------------
    C("XLA109", "positive", """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        sample_rng = torch.Generator(device=device)
        sample_rng.manual_seed(42)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        device = "xla"
        sample_rng = torch.Generator()
        sample_rng.manual_seed(42)
        """, note="device-variable"),
    C("XLA109", "positive", """
        import torch
        import torch_xla

        g = torch.Generator(torch_xla.device()).manual_seed(0)
        """, """
        import torch

        g = torch.Generator().manual_seed(0)
        """, note="already-ported-xla-device"),
    C("XLA109", "negative", """
        import torch

        g = torch.Generator(device="cpu")
        h = torch.Generator()
        """, note="cpu-generators"),
    C("XLA109", "alias", """
        import torch as th

        gen = th.Generator(device="cuda:0")
        """, """
        import torch as th
        import torch_xla  # noqa: F401  (registers the "xla" device)

        gen = th.Generator()
        """),
    # -- XLA110 device type checks around device code ---------------------------------------
    C("XLA110", "positive", """
        import torch

        if use_accel:
            device = torch.accelerator.current_accelerator()
        else:
            device = torch.device("cpu")
        if args.distributed:
            if device.type == 'cuda':
                model.cuda(device)
        elif device.type == "cuda":
            model = torch.nn.DataParallel(model).cuda()
        """, """
        import torch
        import torch_xla

        if use_accel:
            device = torch.device("xla")
        else:
            device = torch.device("cpu")
        if args.distributed:
            if device.type == 'xla':
                model.to(torch_xla.device())
        elif device.type == "xla":
            model = model.to(torch_xla.device())
        """, note="imagenet-accelerator-branches",
        expect=((9, "`device.type == 'cuda'` asks whether the device the script picked is the accelerator"),
                (11, "-> device.type == \"xla\""))),
    C("XLA110", "positive", """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        if device != "cuda":
            x = x.cuda()
        if "cuda" in str(device):
            model.cuda()
        """, """
        import torch
        import torch_xla

        device = "xla"
        if device != "xla":
            x = x.to(torch_xla.device())
        if "xla" in str(device):
            model.to(torch_xla.device())
        """, note="string-device-negated-and-membership",
        expect=((5, "-> device != \"xla\""), (7, "-> \"xla\" in str(device)"))),
    C("XLA110", "positive", """
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if device.type == "cuda":
            model.cuda()
            print(torch.cuda.get_device_name())
        """, """
        import torch
        import torch_xla

        device = torch_xla.device()
        if device.type == "cuda":
            model.to(torch_xla.device())
            print(torch.cuda.get_device_name())
        """, note="guards-code-that-fails-without-cuda-reported",
        expect=((5, "not changed: the code it guards also runs `torch.cuda.get_device_name`"),)),
    C("XLA110", "negative", """
        import torch
        import torch.backends.cudnn as cudnn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model.to(device)
        if device.type == "cuda":
            cudnn.benchmark = True
        if batch.device.type == "cuda":
            x = x.cuda()
        """, """
        import torch
        import torch_xla

        device = torch_xla.device()
        model.to(device)
        if device.type == "cuda":
            pass
        if batch.device.type == "cuda":
            x = x.to(torch_xla.device())
        """, note="no-device-code-or-not-the-picked-device"),
    C("XLA110", "alias", """
        import torch as th

        dev = th.accelerator.current_accelerator() if th.accelerator.is_available() else th.device("cpu")
        if dev.type == 'cuda':
            net = net.cuda()
        """, """
        import torch as th
        import torch_xla

        dev = th.device("xla")
        if dev.type == 'xla':
            net = net.to(torch_xla.device())
        """),
    # -- XLA104 availability picks the device -------------------------------------
    C("XLA104", "positive", """
        import sys
        import torch

        def verify_min_gpu_count(min_gpus: int = 2) -> bool:
            has_gpu = torch.accelerator.is_available()
            gpu_count = torch.accelerator.device_count()
            return has_gpu and gpu_count >= min_gpus

        def main():
            if not verify_min_gpu_count(min_gpus=2):
                print("Unable to locate sufficient 2 gpus to run this example. Exiting.")
                sys.exit()
            train()
        """, """
        import torch

        def verify_min_gpu_count(min_gpus: int = 2) -> bool:
            has_gpu = torch.accelerator.is_available()
            gpu_count = torch.accelerator.device_count()
            return has_gpu and gpu_count >= min_gpus

        def main():
            train()
        """, note="minimum-gpu-count-exit-removed",
        expect=((9, "removed `if not verify_min_gpu_count(min_gpus=2):` and the exit under it"),)),
    C("XLA104", "negative", """
        import sys
        import torch

        def has_data(path):
            return os.path.exists(path)

        def count_gpus():
            return torch.cuda.device_count()

        if not has_data("data"):
            sys.exit()
        if not count_gpus():
            print("no GPU")
        """, note="exits-that-check-no-cuda-device-or-do-not-exit"),
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
        import torch_xla  # noqa: F401  (registers the "xla" device)

        use_accel = not args.no_accel
        if use_accel:
            device = torch.device("xla")
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

        def setup(rank):
            torch.accelerator.set_device_index(rank)
            return torch.accelerator.current_accelerator()
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        def setup(rank):
            return torch.device("xla")
        """, note="torch-accelerator"),
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

        xm.optimizer_step(optimizer)
        """, note="dataparallel-does-not-reduce"),
    # With several processes xm.optimizer_step would reduce before the closure computes
    # the gradients: reported.
    C("XLA201", "positive", """
        import torch
        import torch.distributed as dist


        def main():
            dist.init_process_group("nccl")
            optimizer = torch.optim.LBFGS(model.parameters())
            for x, y in loader:
                def closure():
                    optimizer.zero_grad()
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    return loss
                optimizer.step(closure)
        """, """
        import torch
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def main():
            dist.init_process_group("xla", init_method="xla://")
            optimizer = torch.optim.LBFGS(model.parameters())
            for x, y in loader:
                def closure():
                    optimizer.zero_grad()
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    torch_xla.sync()
                    return loss
                optimizer.step(closure)
                torch_xla.sync()
        """, note="closure-with-several-processes"),
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
    # -- XLA202 autocast ---------------------------------------------------------------------
    C("XLA202", "positive", """
        import torch

        with torch.cuda.amp.autocast():
            out = model(x)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        with torch.autocast("xla", dtype=torch.bfloat16):
            out = model(x)
        """, note="cuda-amp-default-float16"),
    C("XLA202", "positive", """
        import torch

        with torch.cuda.amp.autocast(use_amp):
            out = model(x)
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            out = model(x)
        with torch.amp.autocast(device_type='cuda', enabled=args.amp):
            out = model(x)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        with torch.autocast("xla", dtype=torch.bfloat16, enabled=use_amp):
            out = model(x)
        with torch.autocast("xla", dtype=torch.bfloat16, cache_enabled=False):
            out = model(x)
        with torch.autocast('xla', dtype=torch.bfloat16, enabled=args.amp):
            out = model(x)
        """, note="positional-enabled-and-keywords"),
    C("XLA202", "positive", """
        import torch
        from torch.cuda.amp import autocast

        @autocast()
        def forward(x):
            return model(x)

        with autocast(), torch.no_grad():
            out = model(x)
        ctx = nullcontext() if args.cpu else autocast(enabled=True)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        @torch.autocast("xla", dtype=torch.bfloat16)
        def forward(x):
            return model(x)

        with torch.autocast("xla", dtype=torch.bfloat16), torch.no_grad():
            out = model(x)
        ctx = nullcontext() if args.cpu else torch.autocast("xla", dtype=torch.bfloat16, enabled=True)
        """, note="decorator-with-items-conditional"),
    C("XLA202", "positive", """
        import torch

        with torch.cuda.amp.autocast(dtype=torch.float16):
            out = model(x)
        """, """
        import torch
        import torch_xla.amp
        import torch_xla.core.xla_model as xm

        with torch_xla.amp.autocast(xm.xla_device(), dtype=torch.float16):
            out = model(x)
        """, target="sagemaker", note="sagemaker-keeps-precision"),
    C("XLA202", "negative", """
        import torch

        with torch.no_grad():
            out = model(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
        with torch.autocast("xla", dtype=torch.bfloat16):
            out = model(x)
        """, note="cpu-and-xla-autocast-stay"),
    C("XLA202", "alias", """
        import torch as th
        from torch.cuda.amp import autocast as ac

        with ac(enabled=True):
            out = model(x)
        """, """
        import torch as th
        import torch_xla  # noqa: F401  (registers the "xla" device)

        with th.autocast("xla", dtype=th.bfloat16, enabled=True):
            out = model(x)
        """),
    C("XLA901", "positive", """
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.amp

        with torch_xla.amp.autocast(xm.xla_device()):
            out = model(x)
        scaler = torch_xla.amp.GradScaler()
        """, """
        import torch
        import torch_xla.amp

        with torch.autocast("xla"):
            out = model(x)
        scaler = torch.amp.GradScaler("xla")
        """, note="amp-upgraded-to-2.9"),
    C("XLA901", "positive", """
        import torch
        import torch_xla

        with torch.autocast("xla", dtype=torch.bfloat16):
            out = model(x)
        scaler = torch.amp.GradScaler("xla", init_scale=1024)
        """, """
        import torch
        import torch_xla
        import torch_xla.amp
        import torch_xla.core.xla_model as xm

        with torch_xla.amp.autocast(xm.xla_device(), dtype=torch.bfloat16):
            out = model(x)
        scaler = torch_xla.amp.GradScaler(init_scale=1024)
        """, target="sagemaker", note="amp-downgraded-to-1.13"),
    # -- XLA204 float16 autocast -----------------------------------------------------------------
    C("XLA204", "positive", """
        import torch

        ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
        """, """
        import torch

        ctx = torch.autocast(device_type=device_type, dtype=torch.bfloat16)
        """),
    C("XLA204", "negative", """
        import torch

        ctx = torch.autocast(device_type=device_type, dtype=ptdtype)
        """, note="dtype-variable"),
    C("XLA204", "negative", """
        import torch

        ctx = torch.autocast(device_type=device_type, dtype=torch.float16)
        """, """
        import torch
        import torch_xla.amp
        import torch_xla.core.xla_model as xm

        ctx = torch_xla.amp.autocast(xm.xla_device(), dtype=torch.float16)
        """, target="sagemaker", note="sagemaker-keeps-precision"),
    C("XLA204", "alias", """
        import torch as th

        ctx = th.amp.autocast(device_type=device_type, dtype=th.half)
        """, """
        import torch as th

        ctx = th.amp.autocast(device_type=device_type, dtype=th.bfloat16)
        """),
    # -- XLA205 gradient scaler -------------------------------------------------------------------
    C("XLA205", "positive", """
        import torch

        scaler = torch.cuda.amp.GradScaler(init_scale=2.**10, enabled=use_amp)
        other = torch.amp.GradScaler("cuda")
        third = torch.amp.GradScaler(device="cuda", growth_interval=100)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        scaler = torch.amp.GradScaler("xla", init_scale=2.**10, enabled=use_amp)
        other = torch.amp.GradScaler("xla")
        third = torch.amp.GradScaler("xla", growth_interval=100)
        """),
    C("XLA205", "positive", """
        import torch

        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        """, """
        import torch
        import torch_xla.amp

        scaler = torch_xla.amp.GradScaler(enabled=use_amp)
        """, target="sagemaker", note="sagemaker"),
    C("XLA205", "negative", """
        import torch
        import torch_xla

        scaler = torch.amp.GradScaler("xla")
        """),
    C("XLA205", "alias", """
        import torch
        from torch.cuda.amp import GradScaler as GS

        scaler = GS()
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        scaler = torch.amp.GradScaler("xla")
        """),
    C("XLA205", "positive", """
        import torch
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        scaler = ShardedGradScaler(init_scale=2.0**10)
        """, """
        import torch
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        import torch_xla  # noqa: F401  (registers the "xla" device)

        scaler = ShardedGradScaler("xla", init_scale=2.0**10)
        """, note="sharded"),
    C("XLA205", "positive", """
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        scaler = ShardedGradScaler()
        """, target="sagemaker", note="sharded-sagemaker"),
    # -- XLA206 sync-free optimizers ----------------------------------------------------------------
    C("XLA206", "positive", """
        import torch

        scaler = torch.cuda.amp.GradScaler()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
        """, """
        import torch
        import torch_xla.amp.syncfree as syncfree

        scaler = torch.amp.GradScaler("xla")
        optimizer = syncfree.AdamW(model.parameters(), lr=1e-3)
        """),
    C("XLA206", "negative", """
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        """, note="no-amp"),
    C("XLA206", "alias", """
        import torch
        from torch.optim import SGD
        from torch import optim as O

        class Net(torch.nn.Module):
            def configure_optimizers(self):
                return O.Adam(self.parameters()), SGD(self.parameters(), lr=0.1)

        with torch.cuda.amp.autocast():
            out = model(x)
        """, """
        import torch
        import torch_xla.amp.syncfree as syncfree

        class Net(torch.nn.Module):
            def configure_optimizers(self):
                return syncfree.Adam(self.parameters()), syncfree.SGD(self.parameters(), lr=0.1)

        with torch.autocast("xla", dtype=torch.bfloat16):
            out = model(x)
        """),
    # -- XLA207 optimizers that cannot become sync-free -------------------------------------------------
    C("XLA207", "positive", """
        import torch
        import torch_xla

        scaler = torch.cuda.amp.GradScaler(enabled=False)
        optimizer = torch.optim.RMSprop(model.parameters())
        """, """
        import torch
        import torch_xla

        scaler = torch.amp.GradScaler("xla", enabled=False)
        optimizer = torch.optim.RMSprop(model.parameters())
        """),
    C("XLA207", "negative", """
        import torch

        optimizer = torch.optim.RMSprop(model.parameters())
        """),
    C("XLA207", "alias", """
        import torch
        import torch_xla
        import torch.optim as O

        scaler = torch.cuda.amp.GradScaler(enabled=False)
        optimizer = O.AdamW(groups, **extra_args)
        """, """
        import torch
        import torch_xla
        import torch_xla.amp.syncfree as syncfree

        scaler = torch.amp.GradScaler("xla", enabled=False)
        optimizer = syncfree.AdamW(groups, **extra_args)
        """, note="unpacked-kwargs"),
    # -- XLA208 scaler not needed with bfloat16 -------------------------------------------------------
    C("XLA208", "positive", """
        import torch
        import torch_xla

        scaler = torch.cuda.amp.GradScaler()
        """, """
        import torch
        import torch_xla

        scaler = torch.amp.GradScaler("xla")
        """),
    C("XLA208", "negative", """
        import torch
        import torch_xla

        dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
        """, """
        import torch
        import torch_xla

        dtype = 'bfloat16'
        scaler = torch.amp.GradScaler("xla", enabled=(dtype == 'float16'))
        """, note="enabled-for-float16-only"),
    C("XLA208", "negative", """
        import torch

        scaler = torch.cuda.amp.GradScaler()
        """, """
        import torch
        import torch_xla.amp

        scaler = torch_xla.amp.GradScaler()
        """, target="sagemaker", note="sagemaker-float16"),
    C("XLA208", "alias", """
        import torch
        import torch_xla
        from torch.amp import GradScaler

        scaler = GradScaler('cuda')
        """, """
        import torch
        import torch_xla
        from torch.amp import GradScaler

        scaler = GradScaler('xla')
        """),
    # -- XLA209 precision chosen by CUDA checks ---------------------------------------------------------
    C("XLA209", "positive", """
        import torch

        dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
        ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
        """, """
        import torch

        dtype = 'bfloat16'
        ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
        """),
    C("XLA209", "negative", """
        import torch

        dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
        """, target="sagemaker", note="sagemaker-keeps-precision"),
    C("XLA209", "negative", """
        import torch

        dtype = 'bfloat16' if args.bf16 else 'float16'
        """, note="no-cuda-check"),
    C("XLA209", "alias", """
        from torch.cuda import is_bf16_supported
        import torch as th

        amp_dtype = th.bfloat16 if is_bf16_supported() else th.float16
        """, """
        import torch as th

        amp_dtype = th.bfloat16
        """),
    # -- XLA210 device type for autocast -----------------------------------------------------------------
    C("XLA210", "positive", """
        import torch
        from contextlib import nullcontext

        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        device_type = 'cuda' if 'cuda' in device else 'cpu'
        ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)
        from contextlib import nullcontext

        device = 'xla'
        device_type = 'xla' if 'xla' in device else 'cpu'
        ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
        """),
    C("XLA210", "negative", """
        import torch

        device_type = 'cuda' if 'cuda' in device else 'cpu'
        print(device_type)
        """, note="not-for-autocast"),
    C("XLA210", "alias", """
        import torch as th

        amp_device = "cuda" if th.cuda.is_available() else "cpu"
        with th.autocast(amp_device, dtype=th.bfloat16):
            out = model(x)
        """, """
        import torch as th
        import torch_xla  # noqa: F401  (registers the "xla" device)

        amp_device = "xla"
        with th.autocast(amp_device, dtype=th.bfloat16):
            out = model(x)
        """),
    # -- XLA211 custom autograd functions under autocast -------------------------------------------------
    C("XLA211", "positive", """
        import torch

        class F(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, x):
                return x

            @staticmethod
            @torch.cuda.amp.custom_bwd
            def backward(ctx, g):
                return g
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        class F(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="xla", cast_inputs=torch.float32)
            def forward(ctx, x):
                return x

            @staticmethod
            @torch.amp.custom_bwd(device_type="xla")
            def backward(ctx, g):
                return g
        """),
    C("XLA211", "negative", """
        import torch

        @torch.amp.custom_fwd(device_type="xla")
        def forward(ctx, x):
            return x
        """),
    C("XLA211", "alias", """
        import torch
        from torch.cuda.amp import custom_fwd as cf

        @cf
        def forward(ctx, x):
            return x
        """, """
        import torch
        import torch_xla.amp

        @torch_xla.amp.custom_fwd
        def forward(ctx, x):
            return x
        """, target="sagemaker"),
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
    C("XLA203", "positive", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Trainer:
            def __init__(self, model, optimizer, gpu_id):
                self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
                self.optimizer = optimizer

        def load_train_objs():
            model = torch.nn.Linear(20, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
            return model, optimizer
        """, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch_xla

        class Trainer:
            def __init__(self, model, optimizer, gpu_id):
                self.model = DDP(model.to(torch_xla.device()))
                self.optimizer = optimizer

        def load_train_objs():
            model = torch.nn.Linear(20, 1)
            optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=1e-3)
            return model, optimizer
        """, note="moved-to-an-integer-device-by-a-trainer"),
    C("XLA203", "positive", """
        import torch

        class Net(torch.nn.Module):
            pass

        class Trainer:
            def __init__(self, model, optimizer, device):
                self.model = model.to(device)

        def make_optimizer(net, lr):
            return torch.optim.AdamW(net.parameters(), lr=lr)

        def main():
            device = "cuda" if torch.cuda.is_available() else "cpu"
            model = Net()
            optimizer = make_optimizer(model, 0.1)
            Trainer(model, optimizer, device=device)
        """, """
        import torch
        import torch_xla

        class Net(torch.nn.Module):
            pass

        class Trainer:
            def __init__(self, model, optimizer, device):
                self.model = model.to(device)

        def make_optimizer(net, lr):
            return torch.optim.AdamW(net.parameters(), lr=lr)

        def main():
            device = "xla"
            model = Net()
            optimizer = make_optimizer(model.to(torch_xla.device()), 0.1)
            Trainer(model, optimizer, device=device)
        """, note="optimizer-builder-and-a-trainer-given-the-device"),
    C("XLA203", "positive", """
        import torch

        class Trainer:
            def __init__(self, model, optimizer, device):
                self.model = model.to(device)

        def main(device):
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            Trainer(model, optimizer, device)
        """, note="a-trainer-given-an-unknown-device-reported"),
    C("XLA203", "negative", """
        import torch

        class Trainer:
            def __init__(self, model, gpu_id):
                self.model = model.cuda(gpu_id)

        def main():
            model = torch.nn.Linear(3, 1)
            trainer = Trainer(model, 0)
            optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
        """, """
        import torch
        import torch_xla

        class Trainer:
            def __init__(self, model, gpu_id):
                self.model = model.to(torch_xla.device())

        def main():
            model = torch.nn.Linear(3, 1)
            trainer = Trainer(model, 0)
            optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
        """, note="the-trainer-moves-it-first"),
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
    # The loop drops samples on the host: on the device every new batch shape would be a
    # new graph, so the loop keeps the barrier and its own moves.
    C("XLA302", "negative", """
        import torch

        device = torch.device("cuda")
        for inputs, labels in train_loader:
            keep = ~torch.isnan(inputs).any(dim=1)
            inputs, labels = inputs[keep], labels[keep]
            inputs, labels = inputs.to(device), labels.to(device)
            loss = model(inputs, labels)
            loss.backward()
            optimizer.step()
        """, """
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
        """, note="host-side-filtering"),
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
    C("XLA303", "positive", """
        import torch

        with torch.no_grad():
            for images, target in val_loader:
                images = images.to(device)
                output = model(images)
                losses.update(criterion(output, target.to(device)).item(), images.size(0))
                top1.update(accuracy(output, target), images.size(0))
        """, """
        import torch
        import torch_xla

        with torch.no_grad():
            for images, target in val_loader:
                images = images.to(device)
                output = model(images)
                losses.update(criterion(output, target.to(device)).item(), images.size(0))
                top1.update(accuracy(output, target), images.size(0))
                torch_xla.sync()
        """, note="a-device-meter-beside-a-host-read"),
    C("XLA303", "negative", """
        import torch

        with torch.no_grad():
            for images, target in val_loader:
                images = images.to(device)
                loss = criterion(model(images), target.to(device))
                losses.update(loss.item(), images.size(0))
                seen += images.size(0)
                outputs.append(loss.item())
        """, note="only-host-values-accumulate"),
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
    # torch_xla 1.13's xm.save waits for every process: under a rank check it would hang,
    # so the save is reported instead.
    C("XLA401", "positive", """
        import torch
        import torch.distributed as dist


        def main():
            dist.init_process_group("nccl")
            if dist.get_rank() == 0:
                torch.save(model.state_dict(), "model.pt")
        """, """
        import torch
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def main():
            dist.init_process_group("xla", init_method="xla://")
            if xm.get_ordinal() == 0:
                torch.save(model.state_dict(), "model.pt")
        """, target="sagemaker", note="rank-guarded-save-on-1.13"),
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
    C("XLA501", "positive", """
        import time
        import torch

        start = time.time()
        out = model(x)
        torch.cuda.synchronize()  # wait for the kernels
        print(f"forward took {time.time() - start:.3f}s")
        """, """
        import time
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        start = time.time()
        out = model(x)
        torch_xla.sync()
        xm.wait_device_ops()  # wait for the kernels
        print(f"forward took {time.time() - start:.3f}s")
        """, note="timing-needs-the-barrier-first"),
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
        from torch.utils.data import DataLoader

        torch.backends.cudnn.benchmark = True
        loader = DataLoader(ds, batch_size=8, pin_memory=True)
        if args.clear:
            torch.cuda.empty_cache()
        """, """
        import torch
        from torch.utils.data import DataLoader

        loader = DataLoader(ds, batch_size=8)
        if args.clear:
            pass
        """, note="removed"),
    C("XLA502", "positive", """
        import torch

        kwargs = {'num_workers': 1, 'pin_memory': True}
        loader = make_loader(ds, pin_memory=True)
        torch.backends.cudnn.benchmark = choose_benchmark()
        if torch.backends.cudnn.benchmark:
            print("benchmark mode")
        """, note="reported-where-removal-is-not-safe"),
    C("XLA502", "negative", """
        import torch

        loader = DataLoader(ds, pin_memory=False)
        """),
    C("XLA502", "alias", """
        import torch
        import torch.backends.cudnn as cudnn
        from torch.cuda import empty_cache
        from torch.utils import data

        cudnn.benchmark = True; empty_cache()
        loader = data.DataLoader(
            ds,
            shuffle=True,
            pin_memory=True,
        )
        """, """
        import torch
        from torch.utils import data

        loader = data.DataLoader(
            ds,
            shuffle=True,
        )
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
    # -- XLA305 step outside any loop ------------------------------------------------------------------------
    C("XLA305", "positive", """
        import torch


        def demo(model, optimizer, x, y):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
            print(model.weight)


        demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm


        def demo(model, optimizer, x, y):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
            print(model.weight)


        demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
        """, note="demo-function"),
    C("XLA305", "negative", """
        import torch


        def train_step(model, optimizer, x, y):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()


        for x, y in batches:
            train_step(model, optimizer, x, y)
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm


        def train_step(model, optimizer, x, y):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            xm.optimizer_step(optimizer)


        for x, y in batches:
            train_step(model, optimizer, x, y)
            torch_xla.sync()
        """, note="step-function-in-a-loop"),
    C("XLA305", "alias", """
        import torch.multiprocessing as mp
        import torch.optim as O


        def worker(rank):
            opt = O.SGD(model.parameters(), lr=0.1)
            loss_fn(model(x), y).backward()
            opt.step()


        if __name__ == "__main__":
            mp.spawn(worker, nprocs=1)
        """, """
        import torch.optim as O
        import torch_xla
        import torch_xla.core.xla_model as xm


        def worker(rank):
            opt = O.SGD(model.parameters(), lr=0.1)
            loss_fn(model(x), y).backward()
            xm.optimizer_step(opt)
            torch_xla.sync()


        if __name__ == "__main__":
            torch_xla.launch(worker)
        """, note="handed-to-a-launcher"),
    # -- XLA6 distributed (distributed/rewrite.py) ----------------------------------------------------------
    C("XLA601", "positive", """
        import torch.distributed as dist

        def setup(rank, world):
            dist.init_process_group(backend="nccl", init_method="env://", rank=rank, world_size=world)
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        def setup(rank, world):
            dist.init_process_group("xla", init_method="xla://")
        """, note="keyword-backend"),
    C("XLA601", "positive", """
        import torch.distributed as dist

        backend = "nccl"

        def setup():
            dist.init_process_group(backend)
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        backend = "xla"

        def setup():
            dist.init_process_group(backend, init_method="xla://")
        """, note="backend-variable"),
    C("XLA601", "negative", """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401

        def setup():
            dist.init_process_group("xla", init_method="xla://")
        """, note="already-xla"),
    C("XLA601", "alias", """
        from torch.distributed import init_process_group as ipg

        def setup():
            ipg("gloo")
        """, """
        from torch.distributed import init_process_group as ipg
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        def setup():
            ipg("xla", init_method="xla://")
        """, note="from-import"),
    C("XLA602", "positive", """
        import os
        import torch.distributed as dist

        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            world = dist.get_world_size()
            dist.init_process_group("nccl")
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr

        def main():
            local_rank = xr.local_ordinal()
            world = xr.world_size()
            dist.init_process_group("xla", init_method="xla://")
        """, note="env-ranks"),
    C("XLA602", "negative", """
        import os
        import torch

        def main():
            workers = int(os.environ.get("NUM_WORKERS", 4))
            x = torch.zeros(workers)
        """, note="other-env"),
    C("XLA602", "alias", """
        import torch.distributed as D

        def main():
            D.init_process_group("nccl")
            rank = D.get_rank()
        """, """
        import torch.distributed as D
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr

        def main():
            D.init_process_group("xla", init_method="xla://")
            rank = xr.global_ordinal()
        """, note="dist-alias"),
    C("XLA603", "positive", """
        import os
        import torch.distributed as dist


        def main():
            dist.init_process_group("nccl")
            rank = int(os.environ["RANK"])


        if __name__ == "__main__":
            main()
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def main():
            dist.init_process_group("xla", init_method="xla://")
            rank = xr.global_ordinal()


        def _mp_fn(index):
            main()


        if __name__ == "__main__":
            torch_xla.launch(_mp_fn, args=())
        """, note="torchrun-main-guard"),
    C("XLA603", "negative", """
        import torch


        def main():
            model = torch.nn.Linear(2, 2)


        if __name__ == "__main__":
            main()
        """, note="one-device"),
    C("XLA603", "alias", """
        from torch.multiprocessing import spawn


        def worker(index):
            pass


        if __name__ == "__main__":
            spawn(worker, nprocs=2)
        """, """
        import torch_xla


        def worker(index):
            pass


        if __name__ == "__main__":
            torch_xla.launch(worker)
        """, note="spawn-from-import"),
    C("XLA603", "positive", """
        import torch_xla.distributed.xla_multiprocessing as xmp


        def _mp_fn(index, flags):
            pass


        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=({},), nprocs=8, start_method="fork")
        """, """
        import torch_xla


        def _mp_fn(index, flags):
            pass


        if __name__ == "__main__":
            torch_xla.launch(_mp_fn, args=({},), start_method="fork")
        """, note="old-xmp-spawn"),
    C("XLA604", "positive", """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], output_device=0)
        """, """
        import torch
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        dist.init_process_group("xla", init_method="xla://")
        model = torch.nn.parallel.DistributedDataParallel(model)
        """, note="ddp-keywords"),
    C("XLA604", "negative", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        """, note="no-device-ids"),
    C("XLA604", "alias", """
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, [local_rank])
        """, """
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        """, note="positional-device-ids"),
    C("XLA605", "positive", """
        import torch

        model = torch.nn.DataParallel(model)
        torch.save(model.module.state_dict(), "m.pt")
        """, """
        import torch
        import torch_xla.core.xla_model as xm

        xm.save(model.state_dict(), "m.pt")
        """, note="module-access"),
    C("XLA605", "negative", """
        import torch

        state = model.module.state_dict()
        """, note="no-data-parallel"),
    C("XLA605", "alias", """
        from torch.nn import DataParallel as DP

        net = DP(build()).cuda()
        """, """
        import torch_xla

        net = build().to(torch_xla.device())
        """, note="from-import"),
    C("XLA606", "positive", """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader


        def main():
            dist.init_process_group("nccl")
            loader = DataLoader(dataset, batch_size=8, shuffle=True)
            for epoch in range(3):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
        """, """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def main():
            dist.init_process_group("xla", init_method="xla://")
            loader = DataLoader(dataset, batch_size=8, shuffle=False, sampler=torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True))
            for epoch in range(3):
                loader.sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
        """, note="loader-gets-sampler"),
    C("XLA606", "negative", """
        import torch
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=8, shuffle=True)
        """, note="one-device-loader"),
    C("XLA606", "alias", """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler as DS

        dist.init_process_group("nccl")
        sampler = DS(dataset, shuffle=True)
        """, """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler as DS
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr

        dist.init_process_group("xla", init_method="xla://")
        sampler = DS(dataset, shuffle=True, num_replicas=xr.world_size(), rank=xr.global_ordinal())
        """, note="sampler-alias"),
    C("XLA607", "positive", """
        import torch
        import torch.distributed as dist


        def train(loader, model, optimizer):
            dist.init_process_group("nccl")
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """, """
        import torch
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def train(loader, model, optimizer):
            dist.init_process_group("xla", init_method="xla://")
            scaler = torch.amp.GradScaler("xla")
            for x, y in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                xm.all_reduce("sum", xm._fetch_gradients(optimizer), scale=1.0 / xr.world_size())
                scaler.step(optimizer)
                scaler.update()
                torch_xla.sync()
        """, note="scaled-backward"),
    C("XLA607", "negative", """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP


        def train(loader, model, optimizer):
            dist.init_process_group("nccl")
            model = DDP(model)
            scaler = torch.cuda.amp.GradScaler()
            for x, y in loader:
                with torch.cuda.amp.autocast():
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """, """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def train(loader, model, optimizer):
            dist.init_process_group("xla", init_method="xla://")
            model = DDP(model)
            scaler = torch.amp.GradScaler("xla")
            for x, y in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                torch_xla.sync()
        """, note="ddp-reduces"),
    C("XLA607", "alias", """
        import torch.distributed as D
        from torch.cuda.amp import GradScaler, autocast


        def train(loader, model, opt):
            D.init_process_group("nccl")
            scaler = GradScaler()
            for x, y in loader:
                with autocast():
                    loss = model(x, y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
        """, """
        import torch.distributed as D
        import torch.amp
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def train(loader, model, opt):
            D.init_process_group("xla", init_method="xla://")
            scaler = torch.amp.GradScaler("xla")
            for x, y in loader:
                with torch.autocast("xla", dtype=torch.bfloat16):
                    loss = model(x, y)
                scaler.scale(loss).backward()
                xm.all_reduce("sum", xm._fetch_gradients(opt), scale=1.0 / xr.world_size())
                scaler.step(opt)
                scaler.update()
                torch_xla.sync()
        """, note="amp-from-import"),
    C("XLA608", "positive", """
        import torch.multiprocessing as mp

        model.share_memory()
        processes = []
        for rank in range(4):
            p = mp.Process(target=train, args=(model,))
            p.start()
        """, note="hogwild"),
    C("XLA608", "negative", """
        import torch

        model.share_memory()
        """, note="share-memory-alone"),
    C("XLA608", "alias", """
        import multiprocessing
        import torch

        model.share_memory()
        p = multiprocessing.Process(target=train, args=(model,))
        """, note="multiprocessing-process"),
    C("XLA601", "positive", """
        import torch
        import torch.distributed as dist

        def setup(rank):
            device = torch.device(f"cuda:{rank}")
            backend = torch.distributed.get_default_backend_for_device(device)
            dist.init_process_group(backend=backend)
        """, """
        import torch
        import torch.distributed as dist
        import torch_xla
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        def setup(rank):
            device = torch_xla.device()
            backend = "xla"
            dist.init_process_group("xla", init_method="xla://")
        """, note="default-backend-for-the-device"),
    C("XLA609", "positive", """
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = os.environ["RANK"]
        """, """
        import os
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        dist.init_process_group("xla", init_method="xla://")
        rank = os.environ["RANK"]
        """, note="raw-env"),
    C("XLA609", "negative", """
        import os
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401


        def setup():
            dist.init_process_group("xla", init_method="xla://")
            port = os.environ.get("MASTER_PORT", "12355")
        """, note="ported"),
    C("XLA609", "alias", """
        import os as O
        import torch.distributed as dist

        dist.init_process_group("nccl")
        world = O.getenv("WORLD_SIZE")
        """, """
        import os as O
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        dist.init_process_group("xla", init_method="xla://")
        world = O.getenv("WORLD_SIZE")
        """, note="getenv"),
    C("XLA614", "positive", """
        import os
        import torch
        import torch.distributed as dist

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            assert torch.cuda.is_available(), "needs CUDA"
            dist.init_process_group(backend="nccl")
            rank = int(os.environ["RANK"])
        """, """
        import os
        import torch
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr

        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            dist.init_process_group("xla", init_method="xla://")
            rank = xr.global_ordinal()
        """, note="check-kept"),
    C("XLA614", "negative", """
        import os
        import torch.distributed as dist


        def main():
            if int(os.environ.get("RANK", -1)) != -1:
                dist.init_process_group(backend="nccl")


        if __name__ == "__main__":
            main()
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)


        def main():
            if True:
                dist.init_process_group("xla", init_method="xla://")


        def _mp_fn(index):
            main()


        if __name__ == "__main__":
            torch_xla.launch(_mp_fn, args=())
        """, note="a-function-the-launcher-starts"),
    C("XLA614", "alias", """
        import os as O
        from torch.distributed import init_process_group as setup

        if "LOCAL_RANK" in O.environ:
            setup("nccl")
        """, """
        import os as O
        from torch.distributed import init_process_group as setup
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

        if "LOCAL_RANK" in O.environ:
            setup("xla", init_method="xla://")
        """),
    C("XLA610", "positive", """
        import torch.distributed as dist


        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            if rank == 0:
                print("starting", flush=True)
        """, """
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def main():
            dist.init_process_group("xla", init_method="xla://")
            rank = xr.global_ordinal()
            xm.master_print("starting", flush=True)
        """, note="rank-variable"),
    C("XLA610", "negative", """
        import torch.distributed as dist


        def main(local_rank):
            dist.init_process_group("nccl")
            if local_rank == 0:
                print("once per host")
            if dist.get_rank() == 0:
                print("saving")
                save()
        """, """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def main(local_rank):
            dist.init_process_group("xla", init_method="xla://")
            if local_rank == 0:
                print("once per host")
            if xr.global_ordinal() == 0:
                print("saving")
                save()
        """, note="local-rank-or-more-than-a-print"),
    C("XLA610", "alias", """
        import torch.distributed as D


        def main():
            D.init_process_group("nccl")
            master_process = D.get_rank() == 0
            if master_process:
                print("hello")
        """, """
        import torch.distributed as D
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
        import torch_xla.runtime as xr


        def main():
            D.init_process_group("xla", init_method="xla://")
            master_process = xr.global_ordinal() == 0
            xm.master_print("hello")
        """, note="master-flag"),
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
    C("XLA004", "positive", """
        import deepspeed
        import torch
        import bitsandbytes as bnb
        from apex.optimizers import FusedLAMB
        from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam

        deepspeed.init_distributed()
        optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-3)
        proj = bnb.nn.Linear4bit(64, 64)
        lamb = FusedLAMB(model.parameters())
        offload = DeepSpeedCPUAdam(model.parameters())
        fused = FusedAdam(model.parameters())
        engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=cfg)
        """, note="deepspeed-apex-bitsandbytes", expect=(
            (7, "NCCL process group"), (8, "8-bit optimizer"), (9, "quantized layer"), (10, "Apex CUDA kernel"),
            (11, "DeepSpeed CUDA/CPU optimizer kernel"), (12, "DeepSpeed CUDA/CPU optimizer kernel"),
            (13, "DeepSpeed, which does not run on XLA"),
        )),
    C("XLA004", "positive", """
        import torch
        import triton
        import triton.language as tl
        import xformers.ops as xops
        from flash_attn import flash_attn_func


        @triton.jit
        def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * 2, mask=offsets < n)


        y = flash_attn_func(q, k, v, causal=True)
        z = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
        """, note="kernels-and-attention", expect=(
            (8, "Triton GPU kernel"), (14, "scaled_dot_product_attention"), (15, "xformers CUDA kernel"),
        )),
    C("XLA004", "negative", """
        import torch
        import torch.nn.functional as F

        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        """, note="torch-alternatives"),
    C("XLA004", "alias", """
        import torch
        import flash_attn.flash_attn_interface as fai
        from bitsandbytes.optim import Adam8bit as EightBitAdam

        out = fai.flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_len, max_len)
        optimizer = EightBitAdam(model.parameters())
        """, note="module-alias", expect=((5, "FlashAttention"), (6, "8-bit optimizer"))),
    # -- XLA212 fused optimizer kernels ------------------------------------------------------------------------
    C("XLA212", "positive", """
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), fused=True)
        sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
        """, """
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
        sgd = torch.optim.SGD(model.parameters(), lr=0.1, fused=use_fused)
        """, expect=((3, "removed `fused=True`"), (4, "make sure it is False on XLA"))),
    C("XLA212", "negative", """
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=False, foreach=True)
        opt = FusedOptimizer(model.parameters(), fused=True)
        """),
    C("XLA212", "alias", """
        from torch import optim as O

        optimizer = O.Adam(params, fused=True)
        """, """
        from torch import optim as O

        optimizer = O.Adam(params)
        """, expect=((3, "removed `fused=True`"),)),
    # -- XLA502 CUDA and NCCL environment variables ----------------------------------------------------------------
    C("XLA502", "positive", """
        import os
        import torch

        os.environ["NCCL_DEBUG"] = "INFO"
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
        """, note="nccl-environment", expect=((4, "sets NCCL_DEBUG"), (5, "sets TORCH_NCCL_ASYNC_ERROR_HANDLING"))),
    C("XLA502", "negative", """
        import os
        import torch

        os.environ["PJRT_DEVICE"] = "TPU"
        level = os.environ.get("NCCL_DEBUG", "WARN")
        """, note="xla-environment"),
    C("XLA502", "alias", """
        import torch
        from os import environ

        environ["NCCL_IB_DISABLE"] = "1"
        """, note="environ-alias", expect=((4, "sets NCCL_IB_DISABLE"),)),
    C("XLA506", "positive", """
        import torch

        start = torch.cuda.Event(enable_timing=True)
        """, note="event-timing", expect=((3, "xm.wait_device_ops() and time.perf_counter()"),)),
    # -- issue 22's smaller cases: run-time device strings, CUDA checks, launcher counts, the profiler ---------------
    C("XLA101", "positive", """
        import torch

        def main_worker(rank):
            loc = 'cuda:{:d}'.format(rank)
            target = f"cuda:{rank}"
            model = torch.nn.Linear(4, 2).to(torch.device(loc))
            x = torch.randn(2, 4, device=target)
        """, """
        import torch
        import torch_xla  # noqa: F401  (registers the "xla" device)

        def main_worker(rank):
            loc = "xla"
            target = "xla"
            model = torch.nn.Linear(4, 2).to(torch.device(loc))
            x = torch.randn(2, 4, device=target)
        """, note="runtime-strings-in-any-name", expect=((5, "'cuda:{:d}'.format(rank) -> \"xla\""), (6, "f\"cuda:{rank}\" -> \"xla\""))),
    C("XLA101", "negative", """
        import torch

        def describe(rank):
            label = f"cuda:{rank}"
            print("running on", label)
        """, note="string-not-used-as-device"),
    C("XLA105", "positive", """
        import torch

        if device.type in ('cuda',):
            torch.backends.cudnn.benchmark = True
        if device.type != "cuda":
            print("no GPU: this will be slow")
        """, """
        import torch

        if device.type in ('cuda',):
            pass
        if device.type != "cuda":
            print("no GPU: this will be slow")
        """, note="membership-and-negation", expect=((3, "`device.type in ('cuda',)` is False"), (5, "is True on the XLA device"))),
    C("XLA602", "positive", """
        import torch
        import torch.multiprocessing as mp

        def train(rank, world_size, lr):
            pass

        if __name__ == "__main__":
            world_size = torch.cuda.device_count()
            lr = 0.1 * world_size
            mp.spawn(train, args=(world_size, lr), nprocs=world_size)
        """, """
        import torch
        import torch_xla
        import torch_xla.runtime as xr

        def train(rank, world_size, lr):
            world_size = xr.world_size()
            pass

        if __name__ == "__main__":
            world_size = torch.cuda.device_count()
            lr = 0.1 * world_size
            torch_xla.launch(train, args=(world_size, lr))
        """, note="count-also-used-by-launcher", expect=((11, "the launching process still sees 0"),)),
    C("XLA602", "positive", """
        import torch
        import torch.multiprocessing as mp

        def train(rank, world_size):
            pass

        if __name__ == "__main__":
            world_size = torch.cuda.device_count() if torch.cuda.is_available() else 1
            print(f"{world_size} processes")
            mp.spawn(train, args=(world_size,), nprocs=world_size)
        """, """
        import torch
        import torch_xla
        import torch_xla.runtime as xr

        def train(rank, world_size):
            world_size = xr.world_size()
            pass

        if __name__ == "__main__":
            world_size = torch.cuda.device_count() if torch.cuda.is_available() else 1
            print(f"{world_size} processes")
            torch_xla.launch(train, args=(world_size,))
        """, note="guarded-or-logged-count"),
    C("XLA502", "positive", """
        import torch
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
        """, note="profiler-cuda-activity", expect=((4, "torch_xla.debug.profiler"),)),
    C("XLA502", "negative", """
        import torch
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step()
        """, note="profiler-cpu-only"),
    # -- XLA72 torch.compile ---------------------------------------------------------------------------------
    C("XLA721", "positive", """
        import torch

        compile = True  # use PyTorch 2.0 to compile the model to be faster
        if compile:
            unoptimized_model = model
            model = torch.compile(model)  # requires PyTorch 2.0
        """, """
        import torch

        compile = True  # use PyTorch 2.0 to compile the model to be faster
        if compile:
            unoptimized_model = model
            model = torch.compile(model, backend="openxla")  # requires PyTorch 2.0
        """, note="config-flag", expect=((6, "default inductor backend fails on XLA tensors"),)),
    C("XLA721", "positive", """
        import torch

        @torch.compile
        def gelu(x):
            return x * torch.sigmoid(1.702 * x)

        @torch.compile(fullgraph=True)
        def step(model, x):
            return model(x).sum()

        model.compile()
        compiled = torch.compile(model, dynamic=False)
        """, """
        import torch

        @torch.compile(backend="openxla")
        def gelu(x):
            return x * torch.sigmoid(1.702 * x)

        @torch.compile(fullgraph=True, backend="openxla")
        def step(model, x):
            return model(x).sum()

        model.compile(backend="openxla")
        compiled = torch.compile(model, dynamic=False, backend="openxla")
        """, note="every-form", expect=((3, "@torch.compile(backend=\"openxla\")"), (11, "model.compile()"), (12, "torch.compile(model, dynamic=False) ->"))),
    C("XLA721", "positive", """
        import torch

        model = torch.compile(model, backend="inductor")
        graphed = torch.compile(model, backend='cudagraphs')
        """, """
        import torch

        model = torch.compile(model, backend="openxla")
        graphed = torch.compile(model, backend='openxla')
        """, note="cuda-backends", expect=((3, "-> torch.compile(model, backend=\"openxla\"): backend=\"inductor\" fails"), (4, "skips them"))),
    C("XLA721", "positive", """
        import functools
        import torch

        model = torch.compile(model, **compile_kwargs)
        compiler = functools.partial(torch.compile, fullgraph=True)
        """, note="not-fixable", expect=((4, "unpacked keywords"), (5, "used as a value"))),
    C("XLA721", "positive", """
        import torch

        compile = True
        model = GPT(config)
        if compile:
            model = torch.compile(model)
        if compile: model = torch.compile(model)
        model.compile(mode="max-autotune")

        @torch.compile(fullgraph=True)
        def gelu(x):
            return x * torch.sigmoid(1.702 * x)

        ema = torch.compile(ema_model)
        """, """
        import torch

        compile = True
        model = GPT(config)
        if compile:
            pass
        if compile: pass

        def gelu(x):
            return x * torch.sigmoid(1.702 * x)

        ema = ema_model
        """, target="sagemaker", note="sagemaker-eager", expect=((6, "has no torch.compile"), (12, "torch.compile(ema_model) -> ema_model"))),
    C("XLA721", "negative", """
        import re
        import torch

        compile = True
        pattern = re.compile(r"step (\\d+)")
        code = compile("x + 1", "<expr>", "eval")
        model = torch.compile(model, backend="openxla")
        keras_like.compile(optimizer="adam", loss="mse")
        model.compile(optimizer="adam", loss="mse", metrics=["accuracy"])
        """, note="other-compiles"),
    C("XLA721", "alias", """
        import torch as th
        from torch import compile as tcompile

        net = th.compile(net)
        head = tcompile(head, fullgraph=True)
        """, """
        import torch as th
        from torch import compile as tcompile

        net = th.compile(net, backend="openxla")
        head = tcompile(head, fullgraph=True, backend="openxla")
        """, expect=((4, "th.compile(net) -> th.compile(net, backend=\"openxla\")"), (5, "tcompile(head, fullgraph=True) ->"))),
    C("XLA721", "positive", """
        from transformers import Trainer, TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=True)
        fast = TrainingArguments(
            output_dir="out",
            optim="adamw_torch_xla",
            torch_compile=True,
            torch_compile_backend="inductor",
            torch_compile_mode="max-autotune",
        )
        maybe = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=args.compile)
        """, """
        from transformers import Trainer, TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
        fast = TrainingArguments(
            output_dir="out",
            optim="adamw_torch_xla",
        )
        maybe = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=args.compile)
        """, note="trainer-torch-compile", expect=(
            (3, "the Trainer compiles through Accelerate"), (7, "removed `torch_compile=True, torch_compile_backend"),
            (8, "make sure it is False on XLA"),
        )),
    C("XLA721", "positive", """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", torch_compile=True)
        """, """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
        """, target="sagemaker", note="trainer-sagemaker", expect=((3, "has no torch.compile"),)),
    C("XLA721", "positive", """
        import torch
        import torch._dynamo

        model = torch._dynamo.optimize("inductor")(model)
        fast = torch._dynamo.optimize("openxla")(model)
        """, note="dynamo-optimize", expect=((4, "use torch.compile(model, backend=\"openxla\")"),)),
    C("XLA722", "positive", """
        import torch

        model = torch.compile(model, mode="max-autotune")
        fast = torch.compile(
            model,
            options={"triton.cudagraphs": True, "epilogue_fusion": True},
            fullgraph=True,
        )
        """, """
        import torch

        model = torch.compile(model, backend="openxla")
        fast = torch.compile(
            model,
            fullgraph=True,
            backend="openxla",
        )
        """, expect=((3, "tuned inductor's Triton"), (6, "inductor's own configuration"))),
    C("XLA722", "positive", """
        import torch

        model = torch.compile(model, options=inductor_options, backend="openxla")
        other = torch.compile(model, options={"guard_filter_fn": keep_all, "max_autotune": True}, backend="openxla")
        """, note="not-removable", expect=((3, "keys are not known here"), (4, "guard_filter_fn"))),
    C("XLA722", "negative", """
        import torch

        model = torch.compile(model, mode="default", backend="openxla")
        """),
    C("XLA722", "alias", """
        import torch as th

        model.compile(mode="reduce-overhead")
        """, """
        import torch as th

        model.compile(backend="openxla")
        """, expect=((3, "CUDA graphs"),)),
    C("XLA723", "positive", """
        import torch

        model = torch.compile(model, backend=args.compile_backend)
        debug = torch.compile(model, backend="aot_eager")
        """, expect=((3, "`backend=args.compile_backend` is not the openxla backend"), (4, "aot_eager"))),
    C("XLA723", "negative", """
        import torch

        model = torch.compile(model, backend="openxla")
        """),
    C("XLA723", "alias", """
        from torch import compile

        model = compile(model, backend="eager")
        """),
    C("XLA724", "positive", """
        import torch
        import torch._dynamo
        import torch._inductor.config

        torch._dynamo.config.cache_size_limit = 64
        torch._inductor.config.triton.cudagraphs = False
        """, expect=((5, "applies on XLA too"), (6, "no effect there"))),
    C("XLA724", "negative", """
        import torch
        import torch._dynamo

        torch._dynamo.reset()
        """),
    C("XLA724", "alias", """
        import torch
        from torch._inductor import config as inductor_config

        inductor_config.coordinate_descent_tuning = True
        """, expect=((4, "`inductor_config.coordinate_descent_tuning` is an inductor setting"),)),
    C("XLA721", "positive", """
        import torch
        import torch._dynamo

        torch._dynamo.config.suppress_errors = True
        """, target="sagemaker", note="sagemaker-settings", expect=((2, "`import torch._dynamo`: PyTorch 1.13 has no torch._dynamo"), (4, "PyTorch 1.13 has no torch._dynamo"))),
    # -- XLA611-XLA613 FSDP (fsdp/rewrite.py) ---------------------------------------------------------------
    C("XLA611", "positive", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, ShardingStrategy


        def wrap(model, local_rank):
            return FSDP(
                model,
                sharding_strategy=ShardingStrategy.SHARD_GRAD_OP,
                mixed_precision=MixedPrecision(param_dtype=torch.float16, reduce_dtype=torch.float32),
                device_id=local_rank,
            )
        """, """
        import torch
        import torch_xla.distributed.fsdp as xla_fsdp


        def wrap(model, local_rank):
            return xla_fsdp.XlaFullyShardedDataParallel(
                model,
                reshard_after_forward=False,
                compute_dtype=torch.bfloat16,
                buffer_dtype=torch.float32,
                fp32_reduce_scatter=True,
            )
        """, note="mixed-precision-and-strategy"),
    C("XLA611", "positive", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        def train(model, loader):
            model = FSDP(model)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
        """, """
        import torch
        import torch_xla
        import torch_xla.distributed.fsdp as xla_fsdp


        def train(model, loader):
            model = xla_fsdp.XlaFullyShardedDataParallel(model)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                torch_xla.sync()
        """, note="plain-optimizer-step"),
    C("XLA611", "positive", """
        import functools
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
        from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

        bf16 = MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)


        def wrap(model, block, use_bf16):
            policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={block})
            return FSDP(model, auto_wrap_policy=policy, mixed_precision=bf16 if use_bf16 else None)
        """, """
        import functools
        import torch
        from torch.distributed.fsdp import MixedPrecision
        import torch_xla.distributed.fsdp as xla_fsdp
        import torch_xla.distributed.fsdp.wrap as xla_wrap

        bf16 = MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)


        def wrap(model, block, use_bf16):
            policy = functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={block})
            return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=policy, compute_dtype=torch.bfloat16 if use_bf16 else None, buffer_dtype=torch.bfloat16 if use_bf16 else None)
        """, note="policy-by-name"),
    C("XLA611", "positive", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision


        def wrap(model):
            return FSDP(model, mixed_precision=MixedPrecision(param_dtype=torch.float16), device_id=torch.cuda.current_device())
        """, target="sagemaker", note="sagemaker-reported"),
    C("XLA611", "negative", """
        import torch_xla.distributed.fsdp as xla_fsdp
        from torch_xla.distributed.fsdp.wrap import size_based_auto_wrap_policy


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=size_based_auto_wrap_policy)
        """, note="already-xla"),
    C("XLA611", "alias", """
        import torch.distributed.fsdp as fsdp
        from torch.distributed.fsdp import wrap as wrapping


        def wrap(model):
            model = fsdp.FullyShardedDataParallel(model, auto_wrap_policy=wrapping.always_wrap_policy)
            assert isinstance(model, fsdp.FullyShardedDataParallel)
            return model
        """, """
        import torch_xla.distributed.fsdp as xla_fsdp
        import torch_xla.distributed.fsdp.wrap as xla_wrap


        def wrap(model):
            model = xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=xla_wrap.always_wrap_policy)
            assert isinstance(model, xla_fsdp.XlaFullyShardedDataParallel)
            return model
        """, note="module-alias"),
    C("XLA612", "positive", """
        import torch.distributed.fsdp as fsdp
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy


        def wrap(model, Block):
            return fsdp.FullyShardedDataParallel(
                model, auto_wrap_policy=ModuleWrapPolicy({Block}), sharding_strategy=fsdp.ShardingStrategy.NO_SHARD
            )
        """, """
        import torch.distributed.fsdp as fsdp
        import functools
        import torch_xla.distributed.fsdp as xla_fsdp
        import torch_xla.distributed.fsdp.wrap as xla_wrap


        def wrap(model, Block):
            return xla_fsdp.XlaFullyShardedDataParallel(
                model, auto_wrap_policy=functools.partial(xla_wrap.transformer_auto_wrap_policy, transformer_layer_cls={Block}), sharding_strategy=fsdp.ShardingStrategy.NO_SHARD
            )
        """, note="wrap-policy-and-no-shard"),
    C("XLA612", "positive", """
        from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP


        def wrap(model):
            return FSDP(model, cpu_offload=CPUOffload(offload_params=True), sync_module_states=True)
        """, """
        from torch.distributed.fsdp import CPUOffload
        import torch_xla.distributed.fsdp as xla_fsdp


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model, cpu_offload=CPUOffload(offload_params=True), sync_module_states=True)
        """, note="offload-and-sync"),
    C("XLA611", "positive", """
        import functools
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        def big_enough(module, recurse, nonwrapped_numel, min_params=10**6):
            return recurse or nonwrapped_numel >= min_params


        def wrap(model):
            return FSDP(model, auto_wrap_policy=functools.partial(big_enough, min_params=1000))
        """, """
        import functools
        import torch_xla.distributed.fsdp as xla_fsdp


        def big_enough(module, recurse, unwrapped_params, min_params=10**6):
            return recurse or unwrapped_params >= min_params


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=functools.partial(big_enough, min_params=1000))
        """, note="torch-style-policy"),
    C("XLA612", "positive", """
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        def big_enough(module, recurse, nonwrapped_numel, unwrapped_params=None):
            return recurse or nonwrapped_numel >= 1000


        def wrap(model):
            return FSDP(model, auto_wrap_policy=big_enough)
        """, """
        import torch_xla.distributed.fsdp as xla_fsdp


        def big_enough(module, recurse, nonwrapped_numel, unwrapped_params=None):
            return recurse or nonwrapped_numel >= 1000


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model, auto_wrap_policy=big_enough)
        """, note="torch-style-policy-kept"),
    C("XLA612", "negative", """
        from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP


        def wrap(model):
            return FSDP(model, cpu_offload=CPUOffload(offload_params=False), sync_module_states=False, use_orig_params=True)
        """, """
        import torch_xla.distributed.fsdp as xla_fsdp


        def wrap(model):
            return xla_fsdp.XlaFullyShardedDataParallel(model)
        """, note="defaults-dropped"),
    C("XLA612", "alias", """
        from torch.distributed.fsdp import fully_shard as shard


        def wrap(model):
            for block in model.blocks:
                shard(block)
            shard(model)
        """, note="fsdp2"),
    C("XLA613", "positive", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, FullStateDictConfig, StateDictType


        def save(model):
            config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
                state = model.state_dict()
            return state
        """, note="state-dict-type"),
    C("XLA613", "positive", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        class Trainer:
            def __init__(self, model):
                self.model = FSDP(model)

            def save(self, path):
                torch.save(self.model.state_dict(), path)
        """, """
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.fsdp as xla_fsdp


        class Trainer:
            def __init__(self, model):
                self.model = xla_fsdp.XlaFullyShardedDataParallel(model)

            def save(self, path):
                xm.save(self.model.state_dict(), path)
        """, note="sharded-state-dict"),
    C("XLA613", "negative", """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        def save(model, ema, path):
            model = FSDP(model)
            torch.save(ema.state_dict(), path)
        """, """
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.fsdp as xla_fsdp


        def save(model, ema, path):
            model = xla_fsdp.XlaFullyShardedDataParallel(model)
            xm.save(ema.state_dict(), path)
        """, note="other-model"),
    C("XLA613", "alias", """
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict as state_of


        def save(model, optimizer):
            model_state, optimizer_state = state_of(model, optimizer)
            dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id="ckpt")
        """, note="distributed-checkpoint"),
    # -- XLA821-XLA822 Lightning and Fabric (lightning/rewrite.py) -----------------------------------------
    C("XLA821", "positive", """
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", precision="16-mixed")
        """, """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", devices=4, strategy="xla", precision="bf16-true")
        """, note="trainer"),
    C("XLA821", "positive", """
        import argparse

        import torch
        from lightning.fabric import Fabric

        parser = argparse.ArgumentParser()
        parser.add_argument("--accelerator", default="cuda")
        args = parser.parse_args()
        STRATEGY = "fsdp"


        def train(model, optimizer, loader):
            fabric = Fabric(accelerator=args.accelerator, strategy=STRATEGY, precision=16)
            model, optimizer = fabric.setup(model, optimizer)
            for x, y in fabric.setup_dataloaders(loader):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                fabric.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """, """
        import argparse

        import torch
        from lightning.fabric import Fabric

        parser = argparse.ArgumentParser()
        parser.add_argument("--accelerator", default="tpu")
        args = parser.parse_args()
        STRATEGY = "xla_fsdp"


        def train(model, optimizer, loader):
            fabric = Fabric(accelerator=args.accelerator, strategy=STRATEGY, precision="bf16-true")
            model, optimizer = fabric.setup(model, optimizer)
            for x, y in fabric.setup_dataloaders(loader):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                fabric.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """, note="fabric-flag-and-name"),
    C("XLA821", "negative", """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", devices=8, strategy="xla", precision="bf16-true")
        """, note="already-xla"),
    C("XLA821", "alias", """
        import pytorch_lightning as pl
        import torch


        class Model(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                loss = self(batch).sum()
                self.manual_backward(loss)
                opt.step()
                return loss


        trainer = pl.Trainer(accelerator="cuda", strategy="ddp_find_unused_parameters_true")
        """, """
        import pytorch_lightning as pl
        import torch


        class Model(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                loss = self(batch).sum()
                self.manual_backward(loss)
                opt.step()
                return loss


        trainer = pl.Trainer(accelerator="tpu", strategy="xla")
        """, note="pytorch-lightning"),
    C("XLA822", "positive", """
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", strategy="deepspeed_stage_2", precision="transformer-engine")
        """, """
        import lightning as L

        trainer = L.Trainer(accelerator="tpu", strategy="deepspeed_stage_2", precision="transformer-engine")
        """, note="no-xla-form"),
    C("XLA822", "negative", """
        import lightning as L

        trainer = L.Trainer(accelerator="auto", devices="auto")
        """, note="auto"),
    C("XLA822", "alias", """
        from lightning.pytorch import Trainer


        def fit(model, config):
            trainer = Trainer(strategy=config["strategy"])
            trainer.fit(model)
        """, note="computed"),

    C("XLA821", "positive", """
        import torch
        from lightning.fabric import Fabric


        def make(args):
            return Fabric(accelerator="cuda" if args.gpu else "cpu", strategy="ddp_spawn")
        """, """
        import torch
        from lightning.fabric import Fabric


        def make(args):
            return Fabric(accelerator="tpu" if args.gpu else "cpu", strategy="xla")
        """, note="flag-choice"),
    C("XLA821", "alias", """
        from lightning.pytorch.core import LightningModule
        from lightning.pytorch.trainer import Trainer


        class GAN(LightningModule):
            def training_step(self, batch):
                opt_g, opt_d = self.optimizers()
                self.manual_backward(self(batch).sum())
                opt_g.step()


        trainer = Trainer(accelerator="gpu", devices=2)
        """, """
        from lightning.pytorch.core import LightningModule
        from lightning.pytorch.trainer import Trainer


        class GAN(LightningModule):
            def training_step(self, batch):
                opt_g, opt_d = self.optimizers()
                self.manual_backward(self(batch).sum())
                opt_g.step()


        trainer = Trainer(accelerator="tpu", devices=2)
        """, note="module-paths"),
    C("XLA822", "positive", """
        import pytorch_lightning as pl

        trainer = pl.Trainer(gpus=4, precision=16)
        """, """
        import pytorch_lightning as pl

        trainer = pl.Trainer(gpus=4, precision="bf16-true")
        """, note="lightning-1"),
    C("XLA822", "positive", """
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", strategy="ddp")
        """, target="sagemaker", note="sagemaker"),

    C("XLA821", "positive", """
        import lightning as L

        CONFIG = {"accelerator": "gpu", "devices": 4, "strategy": "ddp", "precision": "16-mixed"}


        def main(model):
            trainer = L.Trainer(**CONFIG, max_epochs=3)
            trainer.fit(model)
        """, """
        import lightning as L

        CONFIG = {"accelerator": "tpu", "devices": 4, "strategy": "xla", "precision": "bf16-true"}


        def main(model):
            trainer = L.Trainer(**CONFIG, max_epochs=3)
            trainer.fit(model)
        """, note="config-dict"),

    C("XLA301", "negative", """
        import torch


        def train_epoch(fabric, model, optimizer, loader):
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                fabric.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """, note="fabric-from-caller"),

    # -- XLA7 lazy mode, XLA8 Hugging Face and Accelerate ------------------------------------------------
    C("XLA701", "alias", """
        import torch as th
        import torch_xla as tx
        from torch_xla.core import xla_model as xmod

        for i, batch in enumerate(train_loader):
            out = net(batch.to(dev))
            out.mean().backward()
            xmod.optimizer_step(opt)
            print("loss", float(out.mean()))
            tx.sync()
        """, """
        import torch as th
        import torch_xla as tx
        from torch_xla.core import xla_model as xmod

        for i, batch in enumerate(train_loader):
            out = net(batch.to(dev))
            out.mean().backward()
            xmod.optimizer_step(opt)
            xmod.add_step_closure(lambda value: print("loss", float(value)), args=(out.mean(),))
            tx.sync()
        """),
    C("XLA701", "negative", """
        import torch

        for x, y in loader:
            with torch.no_grad():
                out = model(x.to(device))
            print(f"accuracy {(out.argmax(1) == y.to(device)).float().mean().item()}")
        print(f"final loss {loss.item()}")
        """, note="outside-training-loop"),
    C("XLA701", "positive", """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            print(f"step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]}")
            torch_xla.sync()
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda step, loss, value: print(f"step {step} loss {loss.item():.4f} lr {value}"), args=(step, loss, scheduler.get_last_lr()[0]))
            torch_xla.sync()
        """, note="fstring-print"),
    C("XLA701", "positive", """
        import logging
        import torch

        logger = logging.getLogger(__name__)
        for step, (x, y) in enumerate(pbar):
            x, y = x.to("cuda"), y.to("cuda")
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            logger.info("step %d loss %.4f", step, loss.item())
            writer.add_scalar("train/loss", loss.item(), global_step=step)
            pbar.set_postfix(loss=loss.item())
            if step % 10 == 0: print(loss)
        """, """
        import logging
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        logger = logging.getLogger(__name__)
        for step, (x, y) in enumerate(pbar):
            x, y = x.to("xla"), y.to("xla")
            loss = criterion(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda step, loss: logger.info("step %d loss %.4f", step, loss.item()), args=(step, loss))
            xm.add_step_closure(lambda loss, step: writer.add_scalar("train/loss", loss.item(), global_step=step), args=(loss, step))
            xm.add_step_closure(lambda loss: pbar.set_postfix(loss=loss.item()), args=(loss,))
            if step % 10 == 0: xm.add_step_closure(lambda loss: print(loss), args=(loss,))
            torch_xla.sync()
        """, note="logging-forms"),
    C("XLA701", "positive", """
        import torch
        import torch_xla

        for x in loader:
            losses = model(x.to(device))
            losses.sum().backward()
            print([l.item() for l in losses])
            torch_xla.sync()
        """, note="not-movable"),
    C("XLA702", "alias", """
        import torch as th
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl

        for batch in pl.MpDeviceLoader(loader, dev):
            loss = model(batch).mean()
            loss.backward()
            xm.optimizer_step(opt)
            values = loss.detach().cpu().numpy()
        """),
    C("XLA702", "negative", """
        import torch
        import torch_xla

        total = torch.zeros((), device=device)
        for x, y in loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            total += loss.detach()
            torch_xla.sync()
        print(total.item())
        """),
    C("XLA702", "positive", """
        import torch
        import torch_xla

        total = 0.0
        for x, y in loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            total += loss.item()
            history.append(loss.item())
            last = loss.item()
            torch_xla.sync()
        """),
    C("XLA703", "alias", """
        import torch as th
        import torch_xla.core.xla_model as xm

        while True:
            out = model(th.randn(4, 4).to(dev))
            out.sum().backward()
            xm.optimizer_step(opt, barrier=True)
            if th.isnan(out).any():
                break
        """),
    C("XLA703", "negative", """
        import torch
        import torch_xla

        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            if step % 10 == 0 and x.shape[0] == 8 and loss is not None:
                pass
            torch_xla.sync()
        """),
    C("XLA703", "positive", """
        import torch
        import torch_xla

        best = 1e9
        for x, y in loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            if loss < best:
                best = loss
            if loss.item() > 100:
                break
            torch_xla.sync()
        """),
    C("XLA704", "alias", """
        import torch as th
        import torch_xla as tx

        state = th.zeros(2, 4, device=tx.device())
        with th.no_grad():
            while steps < 10:
                state = cell(th.randn(2, 4).to(tx.device()), state)
                print(state.norm().item())
                steps += 1
        """, """
        import torch as th
        import torch_xla as tx

        state = th.zeros(2, 4, device=tx.device())
        with th.no_grad():
            while steps < 10:
                state = cell(th.randn(2, 4).to(tx.device()), state)
                print(state.norm().item())
                steps += 1
                tx.sync()
        """),
    C("XLA704", "negative", """
        import torch

        hidden = model.init_hidden(4)
        with torch.no_grad():
            for x in loader:
                hidden = model.init_hidden(4)
                output, hidden = model(x.to(device), hidden)
                total += output.sum().item()
        """),
    C("XLA704", "positive", """
        import torch

        hidden = model.init_hidden(4)
        with torch.no_grad():
            for x in loader:
                output, hidden = model(x.to(device), hidden)
                total += output.sum().item()
        """, """
        import torch
        import torch_xla

        hidden = model.init_hidden(4)
        with torch.no_grad():
            for x in loader:
                output, hidden = model(x.to(device), hidden)
                total += output.sum().item()
                torch_xla.sync()
        """),
    C("XLA711", "alias", """
        import torch as th
        import torch_xla as tx

        dev = tx.device()


        def batchify(data, bsz):
            data = data[: data.size(0) // bsz * bsz]
            return data.view(bsz, -1).t().contiguous().to(dev)


        def get_batch(source, i):
            n = min(8, len(source) - 1 - i)
            return source[i:i + n], source[i + 1:i + 1 + n].reshape(-1)


        train_data = batchify(th.arange(1000), 4)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
            data, targets = get_batch(train_data, i)
            loss = model(data, targets)
            loss.backward()
            tx.sync()
        """, """
        import torch as th
        import torch_xla as tx

        dev = tx.device()


        def batchify(data, bsz):
            data = data[: data.size(0) // bsz * bsz]
            return data.view(bsz, -1).t().contiguous()


        def get_batch(source, i):
            n = min(8, len(source) - 1 - i)
            return source[i:i + n].to(dev), source[i + 1:i + 1 + n].to(dev).reshape(-1)


        train_data = batchify(th.arange(1000), 4)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
            data, targets = get_batch(train_data, i)
            loss = model(data, targets)
            loss.backward()
            tx.sync()
        """),
    C("XLA711", "negative", """
        import torch

        tokens = torch.randint(0, 100, (1000,))
        for offset in range(0, 900, 32):
            x = tokens[offset:offset + 32].to(device)
            loss = model(x)
            loss.backward()
        """, """
        import torch
        import torch_xla

        tokens = torch.randint(0, 100, (1000,))
        for offset in range(0, 900, 32):
            x = tokens[offset:offset + 32].to(device)
            loss = model(x)
            loss.backward()
            torch_xla.sync()
        """),
    C("XLA711", "positive", """
        import torch

        tokens = torch.randint(0, 100, (1000,)).to(device)
        for offset in range(0, 900, 32):
            loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
            loss.backward()
        """, """
        import torch
        import torch_xla

        tokens = torch.randint(0, 100, (1000,)).to(device)
        for offset in range(0, 900, 32):
            loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
            loss.backward()
            torch_xla.sync()
        """, note="not-fixable"),
    C("XLA711", "positive", """
        import torch

        device = torch.device("cuda")
        tokens = torch.randint(0, 100, (1000,)).to(device)
        for step, offset in enumerate(range(0, 900, 32)):
            x = tokens[offset:offset + 32]
            y = tokens[offset + 1:offset + 33]
            loss = model(x, y)
            loss.backward()
            optimizer.step()
        print(tokens.size(0), len(tokens))
        """, """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        device = torch_xla.device()
        tokens = torch.randint(0, 100, (1000,))
        for step, offset in enumerate(range(0, 900, 32)):
            x = tokens[offset:offset + 32].to(device)
            y = tokens[offset + 1:offset + 33].to(device)
            loss = model(x, y)
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        print(tokens.size(0), len(tokens))
        """),
    C("XLA712", "alias", """
        import torch as th
        import torch_xla as tx

        n = 4
        for batch in train_loader:
            n += 1
            out = model(batch.to(tx.device()))
            loss = th.arange(n, device=tx.device()).float().sum() * out.mean()
            loss.backward()
            tx.sync()
        """),
    C("XLA712", "negative", """
        import torch
        import torch_xla

        for step in range(100):
            x = torch.randn(8, 4).to(device)
            loss = model(x).mean() * (0.1 * step) + x.view(8, -1).sum()
            loss.backward()
            torch_xla.sync()
        """),
    C("XLA712", "positive", """
        import torch
        import torch_xla

        for step in range(100):
            x = torch.randn(8, 4).to(device)
            mask = torch.ones(step + 1, device=device)
            loss = (model(x) ** (step % 3)).mean() + x.repeat(step, 1).sum()
            loss.backward()
            torch_xla.sync()
        """),
    C("XLA713", "alias", """
        import torch as th
        import torch.nn as nn


        class Head(nn.Module):
            def forward(self, x):
                keep = th.nonzero(x > 0)
                return x.unique()
        """),
    C("XLA713", "negative", """
        import torch
        import torch_xla

        labels = torch.tensor([0, 1, 1, 2])
        classes = torch.unique(labels)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            mask = (y > 0).float()
            loss = ((model(x) - y) ** 2 * mask).sum() / mask.sum()
            loss.backward()
            torch_xla.sync()
        """),
    C("XLA713", "positive", """
        import torch
        import torch.nn.functional as F
        import torch_xla

        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            mask = y > 0
            loss = F.mse_loss(pred[mask], y[mask]) + torch.masked_select(pred, mask).sum() * 0
            idx = y.nonzero()
            loss.backward()
            torch_xla.sync()
        """),
    C("XLA714", "alias", """
        import torch.utils.data as tud
        import torch_xla.distributed.parallel_loader as pl

        loader = tud.DataLoader(dataset, batch_size=16, drop_last=False)
        for step, batch in enumerate(pl.MpDeviceLoader(loader, device)):
            model(batch).sum().backward()
        """),
    C("XLA714", "negative", """
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
        val_loader = DataLoader(val_set, batch_size=32)
        for x, y in train_loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            optimizer.step()
        """, """
        import torch
        from torch.utils.data import DataLoader
        import torch_xla
        import torch_xla.core.xla_model as xm

        train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
        val_loader = DataLoader(val_set, batch_size=32)
        for x, y in train_loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        """),
    C("XLA714", "positive", """
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
        for x, y in train_loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            optimizer.step()
        """, """
        import torch
        from torch.utils.data import DataLoader
        import torch_xla
        import torch_xla.core.xla_model as xm

        train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
        for x, y in train_loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        """),
    C("XLA801", "alias", """
        import transformers as tf

        args = tf.TrainingArguments("out", optim='adamw_torch', dataloader_num_workers=2)
        trainer = tf.Trainer(model=model, args=args)
        """, """
        import transformers as tf

        args = tf.TrainingArguments("out", optim='adamw_torch_xla', dataloader_num_workers=2)
        trainer = tf.Trainer(model=model, args=args)
        """),
    C("XLA801", "negative", """
        from transformers import Trainer, TrainingArguments, is_torch_xla_available

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla" if is_torch_xla_available() else "adamw_torch", dataloader_num_workers=2)
        trainer = Trainer(model=model, args=args)
        """, note="xla-aware"),
    C("XLA801", "positive", """
        from transformers import Trainer, TrainingArguments


        def main():
            args = TrainingArguments(
                output_dir="out",
                per_device_train_batch_size=8,
                dataloader_num_workers=4,
            )
            trainer = Trainer(model=model, args=args, train_dataset=train_set)
            trainer.train()


        if __name__ == "__main__":
            main()
        """, """
        from transformers import Trainer, TrainingArguments


        def main():
            args = TrainingArguments(
                output_dir="out",
                per_device_train_batch_size=8,
                dataloader_num_workers=4,
                optim="adamw_torch_xla",
            )
            trainer = Trainer(model=model, args=args, train_dataset=train_set)
            trainer.train()


        def _mp_fn(index):
            main()


        if __name__ == "__main__":
            main()
        """, note="code"),
    C("XLA801", "positive", """
        import sys

        from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


        def main():
            parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
            if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
            else:
                model_args, data_args, training_args = parser.parse_args_into_dataclasses()
            trainer = Seq2SeqTrainer(model=model, args=training_args)
            trainer.train()


        def _mp_fn(index):
            # For xla_spawn (TPUs)
            main()
        """, """
        import sys

        from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


        def main():
            parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
            if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
            else:
                model_args, data_args, training_args = parser.parse_args_into_dataclasses()
            if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
                training_args.optim = "adamw_torch_xla"
            trainer = Seq2SeqTrainer(model=model, args=training_args)
            trainer.train()


        def _mp_fn(index):
            # For xla_spawn (TPUs)
            main()
        """, note="parser"),
    C("XLA802", "alias", """
        import transformers as hf


        class MyTrainer(hf.Trainer):
            pass


        MyTrainer(model=model, args=training_args).train()
        """),
    C("XLA802", "negative", """
        from transformers import AutoModel

        model = AutoModel.from_pretrained("bert-base-uncased")
        """),
    C("XLA802", "positive", """
        from transformers import Trainer

        trainer = Trainer(model=model, args=training_args, train_dataset=train_set)
        trainer.train()
        """),
    C("XLA803", "alias", """
        from transformers import Seq2SeqTrainer as S2S


        def main():
            S2S(model=model, args=training_args).train()
        """, """
        from transformers import Seq2SeqTrainer as S2S


        def main():
            S2S(model=model, args=training_args).train()


        def _mp_fn(index):
            main()
        """),
    C("XLA803", "negative", """
        from transformers import Trainer


        def main():
            Trainer(model=model, args=training_args).train()


        def _mp_fn(index):
            # For xla_spawn (TPUs)
            main()


        if __name__ == "__main__":
            main()
        """),
    C("XLA803", "positive", """
        from transformers import Trainer


        def main(config="config.json"):
            Trainer(model=build(config), args=training_args).train()


        if __name__ == "__main__":
            main()
        """, """
        from transformers import Trainer


        def main(config="config.json"):
            Trainer(model=build(config), args=training_args).train()


        def _mp_fn(index):
            main()


        if __name__ == "__main__":
            main()
        """),
    C("XLA804", "alias", """
        import transformers

        tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
        batch = tok.batch_encode_plus(texts, padding=True, truncation=True, max_length=16)
        collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
        """, """
        import transformers

        tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
        batch = tok.batch_encode_plus(texts, padding="max_length", truncation=True, max_length=16)
        collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
        """),
    C("XLA804", "negative", """
        from transformers import AutoTokenizer, DataCollatorWithPadding

        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
        collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=64)
        other = {"padding": True}
        """),
    C("XLA804", "positive", """
        from transformers import AutoTokenizer, DataCollatorWithPadding

        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        enc = tokenizer(texts, padding=True, truncation=True, max_length=64)
        enc2 = tokenizer(texts, padding="longest", max_length=64, return_tensors="pt")
        enc3 = tokenizer(texts, padding=True)
        collator = DataCollatorWithPadding(tokenizer)


        def preprocess(batch, tokenizer):
            return tokenizer(batch["text"], padding='longest', truncation=True, max_length=32)
        """, """
        from transformers import AutoTokenizer, DataCollatorWithPadding

        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
        enc2 = tokenizer(texts, padding="max_length", max_length=64, return_tensors="pt")
        enc3 = tokenizer(texts, padding=True)
        collator = DataCollatorWithPadding(tokenizer)


        def preprocess(batch, tokenizer):
            return tokenizer(batch["text"], padding='max_length', truncation=True, max_length=32)
        """),
    C("XLA805", "alias", """
        from transformers import AutoTokenizer as AT


        def encode(texts, tokenizer):
            return tokenizer(texts, padding='max_length', max_length=128)
        """),
    C("XLA805", "negative", """
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained("gpt2")
        a = tok(texts, padding="max_length", truncation=True, max_length=32)
        b = tok(texts)
        """),
    C("XLA805", "positive", """
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained("gpt2")
        a = tok(texts, padding="max_length")
        b = tok(texts, padding="max_length", max_length=32)
        """),
    C("XLA806", "alias", """
        from dataclasses import dataclass, field
        from typing import Optional

        import transformers


        @dataclass
        class DataTrainingArguments:
            preprocessing_num_workers: Optional[int] = field(default=None, metadata={"help": "processes for preprocessing"})


        parser = transformers.HfArgumentParser((DataTrainingArguments, transformers.TrainingArguments))
        data_args, training_args = parser.parse_args_into_dataclasses()
        training_args.optim = "adamw_torch_xla"
        """),
    C("XLA806", "negative", """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", dataloader_num_workers=4)
        """),
    C("XLA806", "positive", """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
        """),
    C("XLA807", "alias", """
        import torch
        import accelerate

        acc = accelerate.Accelerator(mixed_precision="no")
        model, opt, dl = acc.prepare(model, opt, dl)
        for batch in dl:
            acc.backward(model(batch).sum())
            opt.step()
        """),
    C("XLA807", "negative", """
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm

        for batch in loader:
            loss = model(batch.to(device)).mean()
            loss.backward()
            xm.optimizer_step(optimizer)
            torch_xla.sync()
        """),
    C("XLA807", "positive", """
        import torch
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            print(f"step {step} loss {loss.item()}")
        """),

    C("XLA701", "positive", """
        import torch
        import torch_xla

        for x in loader:
            loss = model(x.to(device)).sum()
            loss.backward()
            print(f"{self.loss.item()=}")
            torch_xla.sync()
        """, note="f-string-equals-stays"),
]
