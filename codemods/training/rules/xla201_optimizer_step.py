"""XLA201 optimizer-step."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

OPTIMIZER_STEP = Rule(
    code="XLA201",
    name="optimizer-step",
    severity="error",
    summary="`optimizer.step()` becomes `xm.optimizer_step(optimizer)`",
    fixable=True,
    why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
    "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
    "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces.)",
    examples=lambda: (
        invalid(
            """
            import torch

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for data, target in loader:
                loss = loss_fn(model(data), target)
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
            findings=(Expected(8, 5, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
            scheduler.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            """,
        ),
        valid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model)
            optimizer.step()
            """,
            note="ddp-reduces-itself",
        ),
        valid(
            """
            import torch
            from torch.optim.swa_utils import SWALR, AveragedModel

            swa_model = AveragedModel(model)
            self.swa_scheduler = SWALR(optimizer, swa_lr=0.05)
            self.swa_scheduler.step()
            """,
            note="swa-scheduler-is-no-optimizer",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.step()
            loss = lbfgs_optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            xm.optimizer_step(optimizer)
            loss = xm.optimizer_step(lbfgs_optimizer, optimizer_args={"closure": closure})
            """,
            findings=(
                Expected(5, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),
                Expected(6, 8, "lbfgs_optimizer.step(closure) -> xm.optimizer_step(lbfgs_optimizer,"),
            ),
        ),
        invalid(
            """
            import torch

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
            """,
            """
            import torch
            import torch_xla

            def train(model, opt, loader, env):
                for x in loader:
                    model(x).sum().backward()
                    opt.step()
                    env.step(action)
                    warmup.step()
                    torch_xla.sync()
            """,
            note="unrecognized-step-reported",
            findings=(Expected(7, 9, "`opt.step()` in a training loop"),),
        ),
        invalid(
            """
            import torch

            device = torch.device("cuda")
            if not torch.cuda.is_available():
                x = x.cuda()
                model = torch.nn.parallel.DistributedDataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            device = torch_xla.device()
            xm.optimizer_step(optimizer)
            """,
            note="ddp-only-in-a-removed-branch",
            findings=(Expected(6, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        invalid(
            """
            import torch

            model = torch.nn.DataParallel(model)
            optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm

            xm.optimizer_step(optimizer)
            """,
            note="dataparallel-does-not-reduce",
            findings=(Expected(4, 1, "optimizer.step() -> xm.optimizer_step(optimizer)"),),
        ),
        # The model is wrapped in FSDP by another module: the annotation says so, and the
        # step stays plain (FSDP reduce-scatters the gradients itself).
        invalid(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


            def train(model: FSDP, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.fsdp as xla_fsdp


            def train(model: xla_fsdp.XlaFullyShardedDataParallel, optimizer, loader):
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
                    torch_xla.sync()
            """,
            note="fsdp-model-wrapped-elsewhere",
            findings=(
                Expected(
                    9,
                    9,
                    "`optimizer.step()` stays: this file annotates its model as `FSDP`, wrapped elsewhere, and FSDP "
                    "reduce-scatters the gradients itself",
                ),
            ),
        ),
        # With several processes xm.optimizer_step would reduce before the closure computes
        # the gradients: reported.
        invalid(
            """
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
            """,
            """
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
            """,
            note="closure-with-several-processes",
            findings=(Expected(16, 9, "`optimizer.step(closure)` with several processes"),),
        ),
        invalid(
            """
            import torch.optim as O

            opt = O.Adam(params)
            opt.step()
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm

            opt = O.Adam(params)
            xm.optimizer_step(opt)
            """,
            alias=True,
            findings=(Expected(5, 1, "opt.step() -> xm.optimizer_step(opt)"),),
        ),
    ),
)
