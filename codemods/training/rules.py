"""XLA201, XLA203, XLA3: optimizer steps, optimizers built before their model moves, step barriers and device loaders."""

from __future__ import annotations

from codemods.engine.rule import Rule, example

OPTIMIZER_STEP = Rule(
    "XLA201", "optimizer-step", "error", "`optimizer.step()` becomes `xm.optimizer_step(optimizer)`", True,
    why="`xm.optimizer_step` all-reduces the gradients across replicas before stepping; with a plain "
    "`optimizer.step()` every process of a multi-process XLA run trains on its own gradients and the replicas "
    "silently drift apart. (Under DistributedDataParallel the step stays plain: DDP already reduces.)",
    examples=(
        example(
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
        ),
    ),
)

OPTIMIZER_BEFORE_MOVE = Rule(
    "XLA203", "optimizer-before-move", "error", "An optimizer built before its model moves to the XLA device gets the moved parameters", True,
    why="Moving a module to an XLA device replaces its Parameter objects (on CUDA they are kept), so an "
    "optimizer built from `model.parameters()` before the move updates stale CPU copies: the model silently "
    "trains nothing (with a gradient scaler: 'No inf checks were recorded for this optimizer'). The model is "
    "moved first, also when the later move is in another function or in a callable of another project file "
    "that the model is handed to (a trainer class), and when a function builds the optimizer from the model; "
    "where the later move may go to the CPU, an error names it.",
    examples=(
        example(
            """
            import torch

            device = torch.device("cuda")
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
        ),
    ),
)

TRAINING_LOOP_BARRIER = Rule(
    "XLA301", "training-loop-barrier", "error", "A training loop ends every iteration with the step barrier", True,
    why="XLA records operations lazily and compiles and runs them at a barrier. Without one per iteration the "
    "graph grows with every step until compiling it runs out of memory; the barrier ends every iteration, "
    "also before each `continue`.",
    examples=(
        example(
            """
            import torch

            for step in range(steps):
                x, y = next(batches)
                loss_fn(model(x), y).backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
            """,
            """
            import torch
            import torch_xla

            for step in range(steps):
                x, y = next(batches)
                loss_fn(model(x), y).backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                torch_xla.sync()
            """,
        ),
    ),
)

DEVICE_LOADER = Rule(
    "XLA302", "device-loader", "error", "A loader that feeds the XLA device is wrapped in MpDeviceLoader", True,
    why="Where every batch of a training loop goes to the XLA device, `MpDeviceLoader` moves the batches in "
    "the background and runs the step barrier itself, so transfers overlap compute (the SageMaker guide's "
    "preference); without it, or a barrier, the graph grows without end.",
    examples=(
        example(
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
        ),
    ),
)

EVAL_LOOP_BARRIER = Rule(
    "XLA303", "eval-loop-barrier", "error", "An evaluation loop over the device ends every iteration with the step barrier", True,
    why="An evaluation loop that keeps its results on the device (`correct += (pred == y).sum()`) builds one "
    "graph over the whole data set, compiled only when the total is read; a barrier per iteration keeps every "
    "graph one batch long. A host read in the loop (`losses.update(loss.item(), n)`) does not change that "
    "when the loop also accumulates device values (`top1.update(acc1, n)`, whose meter keeps "
    "`self.sum += val * n`; `total += correct`; `outputs.append(logits)`): the read materializes only what it "
    "reads, so such a loop gets its barrier too.",
    examples=(
        example(
            """
            import torch

            device = torch.device("cuda")
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
            print(total.item())
            """,
            """
            import torch
            import torch_xla

            device = torch_xla.device()
            with torch.no_grad():
                for x, y in test_batches:
                    total += (model(x.to(device)).argmax(1) == y.to(device)).sum()
                    torch_xla.sync()
            print(total.item())
            """,
        ),
    ),
)

CLOSURE_BARRIER = Rule(
    "XLA304", "closure-barrier", "error", "An optimizer closure (LBFGS) ends with the step barrier", True,
    why="LBFGS calls its closure several times per step; without a barrier in the closure each call grows one "
    "graph, compiled anew at every inner iteration until the compiler runs out of memory.",
    examples=(
        example(
            """
            import torch

            def closure():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                return loss

            optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def closure():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                torch_xla.sync()
                return loss

            xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
            """,
        ),
    ),
)

STEP_BARRIER = Rule(
    "XLA305", "step-barrier", "error", "An optimizer step that no loop runs is followed by the step barrier", True,
    why="In lazy mode nothing runs until a barrier or a host read: a script that trains one step outside any "
    "loop (a demo, a smoke test) would record the parameter update and never execute it.",
    examples=(
        example(
            """
            import torch

            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()

            demo(model, optimizer, x, y)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()

            demo(model, optimizer, x, y)
            """,
        ),
    ),
)

RULES = (OPTIMIZER_STEP, OPTIMIZER_BEFORE_MOVE, TRAINING_LOOP_BARRIER, DEVICE_LOADER, EVAL_LOOP_BARRIER, CLOSURE_BARRIER, STEP_BARRIER)
