"""XLA302 device-loader: where a training loop's batches go to the XLA device on every path, its
loader is wrapped in ``MpDeviceLoader``, which moves the batches and runs the step barrier itself
(the loop then gets no barrier of its own: XLA301's hook asks whether the wrap was made); a
loader handed to a function that feeds its batches unmoved to a model on the XLA device is
wrapped where it is handed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.loop_barrier_rules import gives_loop_barriers
from codemods.engine.rule import Expected, Rule, invalid, valid
from codemods.training.rules.host_read_batch_cases import host_read_batch_invalid, host_read_batch_valid
from codemods.training.rules.wrapped_model_cases import wrapped_model_invalid, wrapped_model_valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A loader handed to a function with a model FSDP wraps: one input for the cases of both targets, whose outputs differ.
LOADER_HANDED_WITH_AN_FSDP_MODEL = """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def train_one_epoch(model, data_loader, optimizer):
    for examples, labels in data_loader:
        loss = model(examples, labels)
        loss.backward()
        optimizer.step()


model = FSDP(torch.nn.Linear(4, 4))
optimizer = torch.optim.AdamW(model.parameters())
loader = torch.utils.data.DataLoader(train_set, batch_size=8)
train_one_epoch(model, loader, optimizer)
"""


DEVICE_LOADER = Rule(
    code="XLA302",
    name="device-loader",
    severity="error",
    summary="A loader that feeds the XLA device is wrapped in MpDeviceLoader",
    fixable=True,
    why="Where every batch of a training loop goes to the XLA device, `MpDeviceLoader` moves the batches in "
    "the background and runs the step barrier itself, so transfers overlap compute (the SageMaker guide's "
    "preference); without it, or a barrier, the graph grows without end. The same wrap ports obligation (3) "
    "across functions and modules: where a model on the XLA device and a DataLoader are handed to a function "
    "(`train_one_epoch(model, data_loader, ...)` of an `engine.py`, or `evaluate(data_loader_val, model)`) whose "
    "loop feeds the loader's batches to that model without moving each tensor it passes, the loader is wrapped "
    "where it is handed: `MpDeviceLoader` moves every tensor of each batch (nested tuples, lists and dicts too), "
    "so the function's own partial moves (`imgs = imgs.to(device)`) become no-ops, and its step barrier comes "
    "on top of the function's own (`torch_xla.sync()` at the end of the iteration, kept for callers that hand "
    "it a plain loader; a second barrier with nothing pending costs nothing). Without it the first forward "
    "fails ('Expected XLA tensor. Got: torch.LongTensor'). A function that uses the loader otherwise than by "
    "iterating it and taking its `len` (`data_loader.sampler.set_epoch(epoch)`: a device loader has no "
    "`sampler`), that reads a part of the batch on the host where a tensor on the XLA device is refused "
    "(`meta['center'].numpy()`, `np.array(meta['score'])`: the device loader would move that part too, and the read "
    "would fail), or that is handed a loader built in the call, is reported instead (XLA116). A loop that reads a "
    "part of its batch on the host before its own move (`data, data_aug = data`, then `data_aug.edge_index.numpy()`, "
    "then `data_aug = data_aug.to(device)`) keeps its moves and gets the step barrier (XLA301) instead of the wrap, "
    "which would move that part first and fail the read. A model wrapped in "
    "torch's FSDP counts as on the XLA device where the target ports it to torch_xla's FSDP (2.9), which moves "
    "it there; the loader then goes to the target's device.",
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
        valid(
            """
            import torch


            def train_one_epoch(model, data_loader, optimizer):
                for examples, labels in data_loader:
                    examples, labels = examples.cuda(), labels.cuda()
                    model(examples, labels).backward()
                    optimizer.step()


            model = torch.nn.Linear(4, 4).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            train_one_epoch(model, loader, optimizer)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train_one_epoch(model, data_loader, optimizer):
                for examples, labels in data_loader:
                    examples, labels = examples.to(torch_xla.device()), labels.to(torch_xla.device())
                    model(examples, labels).backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()


            model = torch.nn.Linear(4, 4).to(torch_xla.device())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            train_one_epoch(model, loader, optimizer)
            """,
            note="handed-loader-whose-batches-the-function-moves",
        ),
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl


            def evaluate(model, data_loader):
                for examples, labels in data_loader:
                    print(model(examples, labels))


            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            evaluate(model, pl.MpDeviceLoader(loader, device))
            evaluate(model, pl.ParallelLoader(loader, [device]).per_device_loader(device))
            """,
            note="handed-loader-already-wrapped",
        ),
        valid(
            """
            import torch


            def evaluate(model, data_loader):
                for examples, labels in data_loader:
                    print(model(examples, labels))


            device = torch.device("cuda")
            model = torch.nn.Linear(4, 4).to(device)
            cpu_model = torch.nn.Linear(4, 4)
            loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            evaluate(cpu_model, loader)
            """,
            """
            import torch
            import torch_xla


            def evaluate(model, data_loader):
                for examples, labels in data_loader:
                    print(model(examples, labels))


            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            cpu_model = torch.nn.Linear(4, 4)
            loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            evaluate(cpu_model, loader)
            """,
            note="handed-model-on-the-cpu",
        ),
        valid(
            LOADER_HANDED_WITH_AN_FSDP_MODEL,
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            import torch_xla.core.xla_model as xm


            def train_one_epoch(model, data_loader, optimizer):
                for examples, labels in data_loader:
                    loss = model(examples, labels)
                    loss.backward()
                    optimizer.step()
                    xm.mark_step()


            model = FSDP(torch.nn.Linear(4, 4))
            optimizer = torch.optim.AdamW(model.parameters())
            loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            train_one_epoch(model, loader, optimizer)
            """,
            target="sagemaker",
            note="handed-fsdp-model-of-a-target-that-does-not-port-fsdp",
        ),
        *wrapped_model_valid(),
        *host_read_batch_valid(),
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
        invalid(
            """
            import torch


            def train_one_epoch(model, data_loader, optimizer, device):
                model.train()
                for step, (examples, labels, mask) in enumerate(data_loader):
                    mask = mask.to(device, non_blocking=True)
                    loss = model(examples, labels, mask)
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()


            @torch.no_grad()
            def evaluate(data_loader, model):
                for examples, labels, mask in data_loader:
                    print(model(examples, labels, mask))


            device = torch.device("cuda")
            model = torch.nn.Linear(4, 4).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            val_loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            for epoch in range(3):
                train_one_epoch(model, train_loader, optimizer, device)
                evaluate(val_loader, model)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl


            def train_one_epoch(model, data_loader, optimizer, device):
                model.train()
                for step, (examples, labels, mask) in enumerate(data_loader):
                    mask = mask.to(device, non_blocking=True)
                    loss = model(examples, labels, mask)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    optimizer.zero_grad()
                    torch_xla.sync()


            @torch.no_grad()
            def evaluate(data_loader, model):
                for examples, labels, mask in data_loader:
                    print(model(examples, labels, mask))


            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            val_loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            for epoch in range(3):
                train_one_epoch(model, pl.MpDeviceLoader(train_loader, device), optimizer, device)
                evaluate(pl.MpDeviceLoader(val_loader, device), model)
            """,
            note="loader-handed-to-a-function-that-feeds-it-unmoved",
            findings=(
                Expected(
                    30,
                    28,
                    "train_loader -> pl.MpDeviceLoader(train_loader, device): `train_one_epoch` (in this file) feeds "
                    "the batches of its `data_loader` (`examples`, `labels`) to `model` (on the XLA device)",
                ),
                Expected(31, 14, "val_loader -> pl.MpDeviceLoader(val_loader, device): `evaluate` (in this file)"),
            ),
        ),
        invalid(
            """
            import torch as th
            from torch.utils.data import DataLoader as DL


            def run_epoch(net, batches, opt):
                for inputs, targets in batches:
                    opt.zero_grad()
                    th.nn.functional.mse_loss(net(inputs), targets).backward()
                    opt.step()


            net = th.nn.Linear(4, 2).cuda()
            opt = th.optim.Adam(net.parameters())
            loader = DL(dataset, batch_size=4)
            for epoch in range(2):
                run_epoch(net, loader, opt)
            """,
            """
            import torch as th
            from torch.utils.data import DataLoader as DL
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl


            def run_epoch(net, batches, opt):
                for inputs, targets in batches:
                    opt.zero_grad()
                    th.nn.functional.mse_loss(net(inputs), targets).backward()
                    xm.optimizer_step(opt)
                    xm.mark_step()


            net = th.nn.Linear(4, 2).to(xm.xla_device())
            opt = th.optim.Adam(net.parameters())
            loader = DL(dataset, batch_size=4)
            for epoch in range(2):
                run_epoch(net, pl.MpDeviceLoader(loader, xm.xla_device()), opt)
            """,
            target="sagemaker",
            alias=True,
            note="loader-handed-to-a-function-that-feeds-it-unmoved-sagemaker",
            findings=(Expected(19, 20, "loader -> pl.MpDeviceLoader(loader, xm.xla_device()): `run_epoch`"),),
        ),
        invalid(
            LOADER_HANDED_WITH_AN_FSDP_MODEL,
            """
            import torch
            import torch_xla
            import torch_xla.distributed.fsdp as xla_fsdp
            import torch_xla.distributed.parallel_loader as pl


            def train_one_epoch(model, data_loader, optimizer):
                for examples, labels in data_loader:
                    loss = model(examples, labels)
                    loss.backward()
                    optimizer.step()
                    torch_xla.sync()


            model = xla_fsdp.XlaFullyShardedDataParallel(torch.nn.Linear(4, 4))
            optimizer = torch.optim.AdamW(model.parameters())
            loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            train_one_epoch(model, pl.MpDeviceLoader(loader, torch_xla.device()), optimizer)
            """,
            note="loader-handed-with-a-model-that-torch-xla-fsdp-puts-on-the-device",
            findings=(Expected(18, 24, "loader -> pl.MpDeviceLoader(loader, torch_xla.device())"),),
        ),
        invalid(
            """
            import torch


            @torch.no_grad()
            def val_one_epoch(model, data_loader):
                for examples, labels in data_loader:
                    print(model(examples, labels))


            def train_one_epoch(model, data_loader, val_loader, optimizer, start_iter):
                for step, (examples, labels) in enumerate(log_every(data_loader, 10, start_iter), start=start_iter):
                    loss = model(examples, labels)
                    loss.backward()
                    optimizer.step()
                    if step % 100 == 0:
                        val_one_epoch(model, val_loader)


            device = torch.device("cuda")
            model = torch.nn.Linear(4, 4).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            val_loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            train_one_epoch(model, train_loader, val_loader, optimizer, 0)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl


            @torch.no_grad()
            def val_one_epoch(model, data_loader):
                for examples, labels in data_loader:
                    print(model(examples, labels))


            def train_one_epoch(model, data_loader, val_loader, optimizer, start_iter):
                for step, (examples, labels) in enumerate(log_every(data_loader, 10, start_iter), start=start_iter):
                    loss = model(examples, labels)
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    if step % 100 == 0:
                        val_one_epoch(model, val_loader)
                    torch_xla.sync()


            device = torch_xla.device()
            model = torch.nn.Linear(4, 4).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_loader = torch.utils.data.DataLoader(train_set, batch_size=8)
            val_loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            train_one_epoch(model, pl.MpDeviceLoader(train_loader, device), pl.MpDeviceLoader(val_loader, device), optimizer, 0)
            """,
            note="loaders-handed-on-through-a-log-wrapper-and-to-an-evaluation-function",
            findings=(
                Expected(28, 24, "train_loader -> pl.MpDeviceLoader(train_loader, device): `train_one_epoch`"),
                Expected(
                    28,
                    65,
                    "val_loader -> pl.MpDeviceLoader(val_loader, device): `train_one_epoch` (in this file) "
                    "feeds the batches of its `val_loader` (`examples`, `labels`)",
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
                    centers = meta["center"].cpu().numpy()
                    print(out, np.array(out.cpu()), centers)


            model = torch.nn.Linear(4, 4).cuda()
            loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            validate(model, loader)
            """,
            """
            import numpy as np
            import torch
            import torch_xla
            import torch_xla.distributed.parallel_loader as pl


            def validate(model, data_loader):
                for images, meta in data_loader:
                    out = model(images)
                    centers = meta["center"].cpu().numpy()
                    print(out, np.array(out.cpu()), centers)


            model = torch.nn.Linear(4, 4).to(torch_xla.device())
            loader = torch.utils.data.DataLoader(val_set, batch_size=8)
            validate(model, pl.MpDeviceLoader(loader, torch_xla.device()))
            """,
            # (a part of the batch read on the host after ``.cpu()`` stands the device loader's move: XLA116
            # reports a loader whose batch parts a read needs on the CPU instead)
            note="handed-loader-batch-read-on-the-host-after-cpu",
            findings=(Expected(16, 17, "loader -> pl.MpDeviceLoader(loader, torch_xla.device()): `validate`"),),
        ),
        *wrapped_model_invalid(),
        *host_read_batch_invalid(),
    ),
)

gives_loop_barriers(DEVICE_LOADER, by_wrapping_loader=True)


@on_facts(DEVICE_LOADER, nodes=lambda facts: facts.obligations.loader_wraps)
def _wrap_handed_loader(
    ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression
) -> cst.BaseExpression:
    """A loader handed to a function that feeds its batches unmoved to a model on the XLA
    device: a device loader where it is handed (the device obligations' ``loader_wraps``)."""
    import libcst as cst

    from codemods.engine.nodes import parse_dotted, with_comma

    wrap = ctx.facts.obligations.loader_wraps[original]
    if wrap.sharded and "fsdp" not in ctx.target.apis:
        return updated  # the target does not port FSDP (reported there): the model stays off XLA

    def wrapped() -> cst.Call | None:
        to = parse_dotted(wrap.device) if wrap.device is not None else ctx.device()
        if to is None:
            return None
        return ctx.call("mp_device_loader", [with_comma(cst.Arg(updated)), cst.Arg(to)])

    return ctx.fix_or_keep(updated, DEVICE_LOADER, original, wrap.message, wrapped)


@on_facts(
    DEVICE_LOADER,
    nodes=lambda facts: [plan.wrap_loader for plan in facts.training.loops.values() if plan.wrap_loader is not None],
)
def _wrap(ctx: Context[Facts], original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
    import libcst as cst

    from codemods.engine.nodes import parse_dotted, with_comma

    device = next(plan.wrap_device for plan in ctx.facts.training.loops.values() if plan.wrap_loader is original)
    if device is None:
        return updated
    return ctx.fix_or_keep(
        updated,
        DEVICE_LOADER,
        original,
        f"{ctx.code(original)} -> {{new}}: moves each batch to the device and ends the step",
        lambda: ctx.call("mp_device_loader", [with_comma(cst.Arg(updated)), cst.Arg(parse_dotted(device))]),
    )
