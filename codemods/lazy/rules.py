"""XLA7: lazy mode.  Host reads that run an extra graph every step (XLA70x) and
recompilation sources that make every step a new graph (XLA71x).  Findings point at
the line of the operation itself (``xla-codemod doctor`` matches them with what it
measures at run time)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

_LOOP = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 4).to(device)
    loss = model(x).pow(2).mean()
    loss.backward()
    xm.optimizer_step(optimizer)
{body}    torch_xla.sync()
"""


def _loop(body: str) -> str:
    return _LOOP.format(body="".join(f"    {line}\n" for line in body.splitlines()))


HOST_READ_LOGGING = Rule(
    code="XLA701",
    name="host-read-logging",
    severity="warning",
    summary="A host read that only logs runs in xm.add_step_closure, with the iteration's values bound",
    fixable=True,
    why="`loss.item()` or `print(loss)` in a training loop runs the pending graph at once, an extra "
    "execution every step; in a step closure it runs after the step's graph, reading values already computed.",
    examples=lambda: (
        Invalid(
            _loop('print(f"step {step} loss {loss.item():.4f}")'),
            _loop(
                'xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.4f}"), args=(step, loss))'
            ),
            findings=(Expected(13, 31, "logging-only host read `loss.item()` moved into a step closure"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            for x, y in loader:
                with torch.no_grad():
                    out = model(x.to(device))
                print(f"accuracy {(out.argmax(1) == y.to(device)).float().mean().item()}")
            print(f"final loss {loss.item()}")
            """,
            note="outside-training-loop",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx
            from torch_xla.core import xla_model as xmod

            for i, batch in enumerate(train_loader):
                out = net(batch.to(dev))
                out.mean().backward()
                xmod.optimizer_step(opt)
                print("loss", float(out.mean()))
                tx.sync()
            """,
            """
            import torch as th
            import torch_xla as tx
            from torch_xla.core import xla_model as xmod

            for i, batch in enumerate(train_loader):
                out = net(batch.to(dev))
                out.mean().backward()
                xmod.optimizer_step(opt)
                xmod.add_step_closure(lambda value: print("loss", float(value)), args=(out.mean(),))
                tx.sync()
            """,
            alias=True,
            findings=(Expected(9, 19, "logging-only host read `float(out.mean())` moved into a step closure"),),
        ),
        invalid(
            """
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
            """,
            """
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
            """,
            note="fstring-print",
            findings=(Expected(10, 31, "logging-only host read `loss.item()` moved into a step closure"),),
        ),
        invalid(
            """
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
            """,
            """
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
            """,
            note="logging-forms",
            findings=(
                Expected(12, 44, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(13, 37, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(14, 27, "logging-only host read `loss.item()` moved into a step closure"),
                Expected(15, 30, "logging-only host read `loss` moved into a step closure"),
            ),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for x in loader:
                losses = model(x.to(device))
                losses.sum().backward()
                print([l.item() for l in losses])
                torch_xla.sync()
            """,
            note="not-movable",
            findings=(Expected(7, 12, "`l.item()` only logs, but stays"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for x in loader:
                loss = model(x.to(device)).sum()
                loss.backward()
                print(f"{self.loss.item()=}")
                torch_xla.sync()
            """,
            note="f-string-equals-stays",
            findings=(Expected(7, 14, "`self.loss.item()` only logs, but stays"),),
        ),
    ),
)

HOST_READ_VALUE = Rule(
    code="XLA702",
    name="host-read-value",
    severity="warning",
    summary="A host read whose value the loop keeps (accumulation, a variable) syncs every step",
    fixable=False,
    why="Each read runs the pending graph before the step ends.  Keep running sums on the device "
    "(`total += loss.detach()`) and read them once per log interval, or read inside xm.add_step_closure.",
    examples=lambda: (
        Invalid(
            _loop("total += loss.item()"),
            findings=(
                Expected(13, 14, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train(args, poses, images):
                hwf = poses[0, :3, -1]
                H, W, focal = hwf
                H, W = int(H), int(W)
                poses = torch.Tensor(poses).cuda()
                model = torch.nn.Linear(4, 2).cuda()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for i in range(100):
                    if i < args.precrop_iters:
                        dH = int(H // 2 * args.precrop_frac)
                        if H // 2 - dH > 0:
                            print("cropping", dH)
                    loss = model(images[i].cuda()).sum()
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train(args, poses, images):
                hwf = poses[0, :3, -1]
                H, W, focal = hwf
                H, W = int(H), int(W)
                poses = torch.Tensor(poses).to(torch_xla.device())
                model = torch.nn.Linear(4, 2).to(torch_xla.device())
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for i in range(100):
                    if i < args.precrop_iters:
                        dH = int(H // 2 * args.precrop_frac)
                        if H // 2 - dH > 0:
                            print("cropping", dH)
                    loss = model(images[i].to(torch_xla.device())).sum()
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
            """,
            target="2.9",
            note="python-numbers-beside-a-tensor",
        ),
        valid(
            """
            import torch
            import torch_xla

            total = torch.zeros((), device=device)
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                total += loss.detach()
                torch_xla.sync()
            print(total.item())
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl

            for batch in pl.MpDeviceLoader(loader, dev):
                loss = model(batch).mean()
                loss.backward()
                xm.optimizer_step(opt)
                values = loss.detach().cpu().numpy()
            """,
            alias=True,
            findings=(Expected(9, 14, "`loss.detach().cpu()` reads a device value to the host every step (an extra"),),
        ),
        invalid(
            """
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
            """,
            findings=(
                Expected(8, 14, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
                Expected(9, 20, "`loss.item()` reads a device value to the host every step to accumulate it (an"),
                Expected(
                    10, 12, "`loss.item()` reads a device value to the host every step (an extra graph execution)"
                ),
            ),
        ),
    ),
)

DEVICE_CONTROL_FLOW = Rule(
    code="XLA703",
    name="device-control-flow",
    severity="warning",
    summary="Control flow on a device value (`if loss.item() > x`, `while t.sum() > 0`) syncs every step",
    fixable=False,
    why="Python needs the value to choose a branch, so the graph runs there; a branch that changes "
    "which operations run also changes the graph.  Use torch.where, or decide once per log interval.",
    examples=lambda: (
        Invalid(
            _loop("if loss.item() > 10:\n    break"),
            findings=(Expected(13, 8, "`loss.item()` decides control flow from a device value"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train(args, poses, images):
                hwf = poses[0, :3, -1]
                H, W, focal = hwf
                H, W = int(H), int(W)
                poses = torch.Tensor(poses).cuda()
                model = torch.nn.Linear(4, 2).cuda()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for i in range(100):
                    if i < args.precrop_iters:
                        dH = int(H // 2 * args.precrop_frac)
                        if H // 2 - dH > 0:
                            print("cropping", dH)
                    loss = model(images[i].cuda()).sum()
                    loss.backward()
                    optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def train(args, poses, images):
                hwf = poses[0, :3, -1]
                H, W, focal = hwf
                H, W = int(H), int(W)
                poses = torch.Tensor(poses).to(xm.xla_device())
                model = torch.nn.Linear(4, 2).to(xm.xla_device())
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for i in range(100):
                    if i < args.precrop_iters:
                        dH = int(H // 2 * args.precrop_frac)
                        if H // 2 - dH > 0:
                            print("cropping", dH)
                    loss = model(images[i].to(xm.xla_device())).sum()
                    loss.backward()
                    xm.optimizer_step(optimizer)
                    xm.mark_step()
            """,
            target="sagemaker",
            note="python-numbers-beside-a-tensor-1.13",
        ),
        valid(
            """
            import torch
            import torch_xla

            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x.to(device)), y.to(device))
                loss.backward()
                if step % 10 == 0 and x.shape[0] == 8 and loss is not None:
                    pass
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            while True:
                out = model(th.randn(4, 4).to(dev))
                out.sum().backward()
                xm.optimizer_step(opt, barrier=True)
                if th.isnan(out).any():
                    break
            """,
            alias=True,
            findings=(Expected(8, 8, "`th.isnan(out).any()` tests a device tensor"),),
        ),
        invalid(
            """
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
            """,
            findings=(
                Expected(8, 8, "`loss < best` tests a device tensor"),
                Expected(10, 8, "`loss.item()` decides control flow from a device value"),
            ),
        ),
    ),
)

CARRIED_STATE_BARRIER = Rule(
    code="XLA704",
    name="carried-state-barrier",
    severity="error",
    summary="An evaluation loop that carries device state across iterations ends every iteration with the step barrier",
    fixable=True,
    why="A host read materializes only the value it reads: the carried state (an RNN hidden state) keeps "
    "the whole history in its graph, which grows and is compiled again every iteration.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
            "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
            "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n",
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nrnn = torch.nn.RNNCell(4, 4).to(device)\n"
            "h = torch.zeros(1, 4, device=device)\nwith torch.no_grad():\n    for x in torch.randn(10, 1, 4):\n"
            "        h = rnn(x.to(device), h)\n        print(h.sum().item())\n        torch_xla.sync()\n",
            findings=(Expected(11, 9, "evaluation loop carries `h` across iterations on the device"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    hidden = model.init_hidden(4)
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx

            state = th.zeros(2, 4, device=tx.device())
            with th.no_grad():
                while steps < 10:
                    state = cell(th.randn(2, 4).to(tx.device()), state)
                    print(state.norm().item())
                    steps += 1
            """,
            """
            import torch as th
            import torch_xla as tx

            state = th.zeros(2, 4, device=tx.device())
            with th.no_grad():
                while steps < 10:
                    state = cell(th.randn(2, 4).to(tx.device()), state)
                    print(state.norm().item())
                    steps += 1
                    tx.sync()
            """,
            alias=True,
            findings=(Expected(10, 9, "evaluation loop carries `state` across iterations on the device"),),
        ),
        invalid(
            """
            import torch

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
            """,
            """
            import torch
            import torch_xla

            hidden = model.init_hidden(4)
            with torch.no_grad():
                for x in loader:
                    output, hidden = model(x.to(device), hidden)
                    total += output.sum().item()
                    torch_xla.sync()
            """,
            findings=(Expected(9, 9, "evaluation loop carries `hidden` across iterations on the device"),),
        ),
    ),
)

SLICED_DEVICE_DATA = Rule(
    code="XLA711",
    name="sliced-device-data",
    severity="warning",
    summary="A device tensor sliced with a per-step Python integer: the data stays on the host and each slice moves",
    fixable=True,
    why="The offset of a slice is compiled into the graph, so `source[i:i+n]` on a device tensor is a new "
    "graph for every `i`.  A slice taken on the host and moved to the device is fresh input data: one graph.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0).to(device)\n"
            "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
            "    loss = (source[i:i + 10] * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
            "import torch\nimport torch_xla\n\ndevice = torch_xla.device()\nsource = torch.arange(100.0)\n"
            "w = torch.ones(10, device=device, requires_grad=True)\nfor i in range(0, 90, 10):\n"
            "    loss = (source[i:i + 10].to(device) * w).sum()\n    loss.backward()\n    torch_xla.sync()\n",
            findings=(
                Expected(5, 10, "torch.arange(100.0).to(device) -> torch.arange(100.0)"),
                Expected(8, 13, "source[i:i + 10] -> source[i:i + 10].to(device)"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch

            tokens = torch.randint(0, 100, (1000,))
            for offset in range(0, 900, 32):
                x = tokens[offset:offset + 32].to(device)
                loss = model(x)
                loss.backward()
            """,
            """
            import torch
            import torch_xla

            tokens = torch.randint(0, 100, (1000,))
            for offset in range(0, 900, 32):
                x = tokens[offset:offset + 32].to(device)
                loss = model(x)
                loss.backward()
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
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
            """,
            """
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
            """,
            alias=True,
            findings=(
                Expected(9, 12, "data.view(bsz, -1).t().contiguous().to(dev) -> data.view(bsz, -1).t().contiguous()"),
                Expected(14, 12, "source[i:i + n] -> source[i:i + n].to(dev)"),
                Expected(14, 37, "source[i + 1:i + 1 + n] -> source[i + 1:i + 1 + n].to(dev)"),
            ),
        ),
        invalid(
            """
            import torch

            tokens = torch.randint(0, 100, (1000,)).to(device)
            for offset in range(0, 900, 32):
                loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
                loss.backward()
            """,
            """
            import torch
            import torch_xla

            tokens = torch.randint(0, 100, (1000,)).to(device)
            for offset in range(0, 900, 32):
                loss = model(tokens[offset:offset + 32]) + tokens.float().mean()
                loss.backward()
                torch_xla.sync()
            """,
            note="not-fixable",
            findings=(Expected(6, 18, "`tokens[offset:offset + 32]` slices a device tensor at a per-step offset"),),
        ),
        invalid(
            """
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
            """,
            """
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
            """,
            findings=(
                Expected(6, 10, "torch.randint(0, 100, (1000,)).to(device) -> torch.randint(0, 100, (1000,))"),
                Expected(8, 9, "tokens[offset:offset + 32] -> tokens[offset:offset + 32].to(device)"),
                Expected(9, 9, "tokens[offset + 1:offset + 33] -> tokens[offset + 1:offset + 33].to(device)"),
            ),
        ),
    ),
)

STEP_VARYING_SHAPE = Rule(
    code="XLA712",
    name="step-varying-shape",
    severity="warning",
    summary="A per-step Python integer used as a shape or static argument (view, arange, topk, ** ...) recompiles every step",
    fixable=False,
    why="Shapes, offsets, counts and exponents are compiled into the graph.  Plain arithmetic with Python "
    "numbers is not (torch_xla passes those as device data), so keep shapes fixed and vary values instead.",
    examples=lambda: (
        Invalid(_loop("y = x.repeat(step + 1, 1)"), findings=(Expected(13, 9, "`x.repeat(step + 1, 1)`"),)),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla

            for step in range(100):
                x = torch.randn(8, 4).to(device)
                loss = model(x).mean() * (0.1 * step) + x.view(8, -1).sum()
                loss.backward()
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch_xla as tx

            n = 4
            for batch in train_loader:
                n += 1
                out = model(batch.to(tx.device()))
                loss = th.arange(n, device=tx.device()).float().sum() * out.mean()
                loss.backward()
                tx.sync()
            """,
            alias=True,
            findings=(Expected(8, 12, "`th.arange(n, device=tx.device())`"),),
        ),
        invalid(
            """
            import torch
            import torch_xla

            for step in range(100):
                x = torch.randn(8, 4).to(device)
                mask = torch.ones(step + 1, device=device)
                loss = (model(x) ** (step % 3)).mean() + x.repeat(step, 1).sum()
                loss.backward()
                torch_xla.sync()
            """,
            findings=(
                Expected(6, 12, "`torch.ones(step + 1, device=device)`"),
                Expected(7, 13, "`(model(x) ** (step % 3))`"),
                Expected(7, 46, "`x.repeat(step, 1)`"),
            ),
        ),
    ),
)

DYNAMIC_SHAPE = Rule(
    code="XLA713",
    name="dynamic-shape",
    severity="warning",
    summary="An operation whose output shape depends on the data (nonzero, masked_select, boolean masks, unique)",
    fixable=False,
    why="XLA compiles for fixed shapes: the size is read to the host and each new size is a new graph.  "
    "Keep the shape: multiply by the mask (`(x * mask).sum() / mask.sum()`) or use torch.where(mask, x, 0).",
    examples=lambda: (
        Invalid(
            _loop("positive = x[x > 0]"),
            findings=(
                Expected(13, 16, "`x[x > 0]`: boolean-mask indexing has a data-dependent shape (a host read and a"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
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
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch as th
            import torch.nn as nn


            class Head(nn.Module):
                def forward(self, x):
                    keep = th.nonzero(x > 0)
                    return x.unique()
            """,
            alias=True,
            findings=(Expected(7, 16, "`th.nonzero(x > 0)`"), Expected(8, 16, "`x.unique()`")),
        ),
        invalid(
            """
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
            """,
            findings=(
                Expected(9, 23, "`pred[mask]`"),
                Expected(9, 35, "`y[mask]`: boolean-mask indexing has a data-dependent shape (a host read and a"),
                Expected(9, 46, "`torch.masked_select(pred, mask)`"),
                Expected(10, 11, "`y.nonzero()`"),
            ),
        ),
    ),
)

SHORT_LAST_BATCH = Rule(
    code="XLA714",
    name="short-last-batch",
    severity="warning",
    summary="A training DataLoader without drop_last=True: its short last batch compiles a second graph",
    fixable=False,
    why="When the dataset size is not a multiple of the batch size the last batch has another shape, "
    "and every distinct shape is compiled.  Pass drop_last=True where dropping a few samples per epoch is fine.",
    examples=lambda: (
        Invalid(
            "import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
            "device = torch_xla.device()\nmodel = torch.nn.Linear(4, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.randn(100, 4)), batch_size=16)\nfor (x,) in loader:\n"
            "    model(x.to(device)).sum().backward()\n    torch_xla.sync()\n",
            findings=(Expected(7, 10, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
            val_loader = DataLoader(val_set, batch_size=32)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                optimizer.step()
            """,
            """
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
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch.utils.data as tud
            import torch_xla.distributed.parallel_loader as pl

            loader = tud.DataLoader(dataset, batch_size=16, drop_last=False)
            for step, batch in enumerate(pl.MpDeviceLoader(loader, device)):
                model(batch).sum().backward()
            """,
            alias=True,
            findings=(Expected(4, 10, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
        invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
            for x, y in train_loader:
                loss = model(x.to(device), y.to(device))
                loss.backward()
                optimizer.step()
            """,
            """
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
            """,
            findings=(Expected(6, 16, "this training DataLoader keeps a short last batch (no drop_last=True)"),),
        ),
    ),
)

RULES = (
    HOST_READ_LOGGING,
    HOST_READ_VALUE,
    DEVICE_CONTROL_FLOW,
    CARRIED_STATE_BARRIER,
    SLICED_DEVICE_DATA,
    STEP_VARYING_SHAPE,
    DYNAMIC_SHAPE,
    SHORT_LAST_BATCH,
)
