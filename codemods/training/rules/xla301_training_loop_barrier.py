"""XLA301 training-loop-barrier: in lazy mode the graph grows until something cuts it, so a
training loop ends every iteration with the target's barrier (``torch_xla.sync()`` /
``xm.mark_step()``), also before each ``continue`` that skips the end and each ``break`` that
leaves the loop (the iteration that breaks out ran its step too); a loop whose loader
XLA302 wrapped in ``MpDeviceLoader`` gets the barrier from the loader instead."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.loop_barrier_rules import gives_loop_barriers
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid
from codemods.training.rules.accelerate_loader_cases import accelerate_loader_invalid, accelerate_loader_valid
from codemods.training.rules.construction_loop_cases import CONSTRUCTION_INVALID, CONSTRUCTION_VALID
from codemods.training.rules.locked_barriers import LOCKED_WHY, barrier_after_locked_step, report_unplaceable
from codemods.training.rules.locked_step_cases import LOCKED_STEP_INVALID, LOCKED_STEP_VALID
from codemods.training.rules.optimizer_list_cases import OPTIMIZER_LIST_STEP
from codemods.training.rules.overridden_loader_cases import OVERRIDDEN_WHY as OWN
from codemods.training.rules.overridden_loader_cases import (
    overridden_loader_invalid,
    overridden_loader_valid,
    reports_overridden_loaders,
)
from codemods.training.rules.part_loop_cases import PART_LOOP_INVALID, PART_LOOP_VALID
from codemods.training.rules.ported_loop_cases import PORTED_LOOPS_WHY, engine_loop_invalid, ported_loop_valid
from codemods.training.rules.xla302_device_loader import DEVICE_LOADER

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A project's optimizer wrapper whose own ``step(loss)`` steps the optimizer it holds, stepped in a
# training loop that then steps its schedulers: the barrier ends the training loop's iteration;
# the loop over the schedulers takes no step (``sched.step()`` is no call of the wrapper's step).
_WRAPPER_AND_SCHEDULERS = """
import torch


class Stepper:
    def __init__(self, optim):
        self._optim = optim

    def step(self, loss):
        self._optim.zero_grad()
        loss.backward()
        self._optim.step()


def train(model, loader, schedulers):
    stepper = Stepper(torch.optim.SGD(model.parameters(), lr=0.1))
    for x in loader:
        stepper.step(model(x).sum())
        for sched in schedulers:
            sched.step()
"""


# The same wrapper where only an update method steps the schedulers after the step it is handed
# (``for lr_scheduler in self.lr_schedulers``, ``for s in self.lr_schedulers``): no training loop.
_SCHEDULER_LOOPS_ONLY = """
import torch


class Algorithm(torch.nn.Module):
    class Optimizer:
        def __init__(self, optim):
            self._optim = optim

        def step(self, loss):
            self._optim.zero_grad()
            loss.backward()
            self._optim.step()

    def __init__(self):
        super().__init__()
        self.lr_schedulers = []

    def update(self, batch, update_with_batch):
        stats = update_with_batch(batch)
        for lr_scheduler in self.lr_schedulers:
            lr_scheduler.step()
        for s in self.lr_schedulers:
            s.step()
        return stats
"""

TRAINING_LOOP_BARRIER = Rule(
    code="XLA301",
    name="training-loop-barrier",
    severity="error",
    summary="A training loop ends every iteration with the step barrier",
    fixable=True,
    why="XLA records operations lazily and compiles and runs them at a barrier. Without one per iteration the "
    "graph grows with every step until compiling it runs out of memory; the barrier ends every iteration, "
    "also before each `continue` and each `break` of the loop (the iteration that breaks out ran its step too). A loop "
    "that calls a method a class of the project gets at run time (`setattr(Box, 'post_forward_process', post)`, "
    "where `post` may be a project function that steps: torchdistill's registered post-forward process) drives that "
    "step as it would a method the class defines. The loops of an optimizer class's own methods (a subclass of a torch.optim "
    "class: its `step()` over the param groups, an unrolled inner loop, a preconditioner update) are no "
    "training loops: they run inside the step of the loop that calls `optimizer.step()`, which gets the barrier. "
    "Nor are those of a custom autograd function's `forward` and `backward` (a subclass of "
    "torch.autograd.Function, whose backward runs each layer's backward in turn): they run inside the "
    "backward pass of a step. Nor is a loop that builds modules and their optimizers and constructs a class "
    "with them and the loss function (`AdversarialLoss(adversary, optimizer, loss=loss)`): the class stores "
    "them, and a method called later takes the step. Nor is a loop of micro-batches that backs each and steps "
    "nothing (gradient accumulation) inside a loop that steps: the outer iteration gets the barrier; over a "
    "loader, the inner loop keeps its own." + PORTED_LOOPS_WHY + LOCKED_WHY + OWN,
    examples=lambda: (
        invalid(
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
            findings=(Expected(9, 5, "training loop"),),
        ),
    ),
    valid=lambda: (
        *ported_loop_valid(),
        *LOCKED_STEP_VALID,
        *PART_LOOP_VALID,
        *CONSTRUCTION_VALID,
        *accelerate_loader_valid(),
        *overridden_loader_valid(),
        valid(
            OPTIMIZER_LIST_STEP,
            substituted(
                OPTIMIZER_LIST_STEP,
                ("from torch import optim\n", "from torch import optim\nimport torch_xla.core.xla_model as xm\n"),
                ("        self._optimizer.step()", "        xm.optimizer_step(self._optimizer)"),
            ),
            note="a-loop-stepping-each-optimizer-of-a-list-is-no-training-loop",
        ),
        valid(
            _SCHEDULER_LOOPS_ONLY,
            substituted(
                _SCHEDULER_LOOPS_ONLY,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ("            self._optim.step()", "            xm.optimizer_step(self._optim)"),
            ),
            note="a-loop-over-schedulers-after-a-wrapper-step-is-no-training-loop",
        ),
        valid(
            """
            import torch
            from torch.autograd import Function


            class ReversibleStack(Function):
                @staticmethod
                def backward(ctx, dx):
                    for layer in ctx.layers[::-1]:
                        dx = layer.backward_pass(dx)
                    return dx, None


            class Block(torch.nn.Module):
                def backward_pass(self, dy):
                    with torch.enable_grad():
                        torch.autograd.backward(self.f(self.x), dy)
                    return self.x.grad
            """,
            note="a-custom-autograd-functions-backward-runs-inside-the-step",
        ),
        valid(
            """
            import torch


            class Unrolled(torch.optim.Optimizer):
                def step(self, closure):
                    for _ in range(self.inner_steps):
                        loss = closure()
                        loss.backward()
                        for group in self.param_groups:
                            for p in group["params"]:
                                p.data.add_(p.grad, alpha=-group["lr"])
                    return loss
            """,
            note="an-optimizers-own-step-is-no-training-loop",
        ),
        valid(
            """
            import torch
            import torch_xla

            for x in batches:
                model(x).sum().backward()
                torch_xla.sync()
            for epoch in range(3):
                print(epoch)
            """,
            note="has-barrier-and-no-training",
        ),
        valid(
            """
            import torch


            def train_epoch(fabric, model, optimizer, loader):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    fabric.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="fabric-from-caller",
        ),
        valid(
            """
            import torch


            def train(model, loader, accelerator, optimizer):
                for batch_id, batch in enumerate(loader, start=1):
                    accelerator.backward(model(**batch).loss)
                    if batch_id % 2 == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """,
            note="accelerator-from-caller",
        ),
        valid(
            """
            import torch


            class Trainer:
                def __init__(self, net):
                    self.net = net

                def log_step(self, x):
                    self.net(x).sum().backward()


            class Logger:
                def log_step(self, x):
                    print(x)


            def main(batches):
                logger = Logger()
                for x in batches:
                    logger.log_step(x)
            """,
            note="a-method-of-a-known-class-that-takes-no-step-is-no-training-loop",
        ),
    ),
    invalid=lambda: (
        *engine_loop_invalid(),
        *LOCKED_STEP_INVALID,
        *PART_LOOP_INVALID,
        *CONSTRUCTION_INVALID,
        *accelerate_loader_invalid(),
        *overridden_loader_invalid(),
        invalid(
            _WRAPPER_AND_SCHEDULERS,
            substituted(
                _WRAPPER_AND_SCHEDULERS,
                ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
                ("        self._optim.step()", "        xm.optimizer_step(self._optim)"),
                ("            sched.step()\n", "            sched.step()\n        torch_xla.sync()\n"),
            ),
            note="wrapper-step-then-scheduler-loop",
            findings=(Expected(22, 9, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            substituted(
                _WRAPPER_AND_SCHEDULERS, ("import torch\n", "import torch as th\n"), ("torch.optim", "th.optim")
            ),
            substituted(
                _WRAPPER_AND_SCHEDULERS,
                ("import torch\n", "import torch as th\nimport torch_xla.core.xla_model as xm\n"),
                ("torch.optim", "th.optim"),
                ("        self._optim.step()", "        xm.optimizer_step(self._optim)"),
                ("            sched.step()\n", "            sched.step()\n        xm.mark_step()\n"),
            ),
            target="sagemaker",
            alias=True,
            note="wrapper-step-then-scheduler-loop-aliased",
            findings=(Expected(21, 9, "training loop: xm.mark_step() ends every iteration"),),
        ),
        # The barrier under the availability check goes with the branch the device
        # rewrite drops (False on XLA): the loop needs its own.
        invalid(
            """
            import torch
            import torch_xla

            for x, y in loader:
                if not torch.cuda.is_available():
                    device = torch.device("cuda")
                    torch_xla.sync()
                loss_fn(model(x.to(device)), y).backward()
            """,
            """
            import torch
            import torch_xla

            for x, y in loader:
                loss_fn(model(x.to(device)), y).backward()
                torch_xla.sync()
            """,
            note="barrier-in-a-dropped-branch",
            findings=(Expected(6, 5, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).cuda()
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Agent:
                def __init__(self):
                    self.net = torch.nn.Linear(4, 2).to(torch_xla.device())
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(self.optimizer)


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
                    torch_xla.sync()
            """,
            note="a-step-method-called-through-an-instance",
            findings=(Expected(21, 9, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def optimize(self, loss):
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()

                def mlm_step(self, x):
                    self.optimize(self.net(x.cuda()).sum())


            class SingleTrainer(Trainer):
                pass


            class EncDecTrainer(Trainer):
                def mt_step(self, x):
                    self.optimize(self.net(x.cuda()).mean())


            def main(net, encoder_only, batches):
                if encoder_only:
                    trainer = SingleTrainer(net)
                else:
                    trainer = EncDecTrainer(net)
                for x in batches:
                    trainer.mlm_step(x)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def optimize(self, loss):
                    self.optimizer.zero_grad()
                    loss.backward()
                    xm.optimizer_step(self.optimizer)

                def mlm_step(self, x):
                    self.optimize(self.net(x.to(torch_xla.device())).sum())


            class SingleTrainer(Trainer):
                pass


            class EncDecTrainer(Trainer):
                def mt_step(self, x):
                    self.optimize(self.net(x.to(torch_xla.device())).mean())


            def main(net, encoder_only, batches):
                if encoder_only:
                    trainer = SingleTrainer(net)
                else:
                    trainer = EncDecTrainer(net)
                for x in batches:
                    trainer.mlm_step(x)
                    torch_xla.sync()
            """,
            note="a-step-method-inherited-from-a-base-class",
            findings=(Expected(36, 9, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch


            class Agent:
                def update(self, batch):
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            class Agent:
                def update(self, batch):
                    self.net(batch.to(xm.xla_device())).sum().backward()
                    xm.optimizer_step(self.optimizer)


            def main():
                agent = Agent()
                for episode in range(10):
                    agent.update(torch.randn(8, 4))
                    xm.mark_step()
            """,
            target="sagemaker",
            note="a-step-method-called-through-an-instance-sagemaker",
            findings=(Expected(15, 9, "training loop: xm.mark_step() ends every iteration"),),
        ),
        invalid(
            """
            import torch
            from util.misc import NativeScaler

            loss_scaler = NativeScaler()
            for x in loader:
                loss = model(x)
                loss_scaler(loss, optimizer)
            """,
            """
            import torch
            import torch_xla
            from util.misc import NativeScaler

            loss_scaler = NativeScaler()
            for x in loader:
                loss = model(x)
                loss_scaler(loss, optimizer)
                torch_xla.sync()
            """,
            note="step-wrapper-is-a-training-step",
            findings=(Expected(9, 5, "training loop"),),
        ),
        invalid(
            """
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
            """,
            """
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
            """,
            note="step-through-helpers",
            findings=(Expected(17, 13, "training loop"),),
        ),
        invalid(
            """
            import torch

            for step in range(100):
                x, y = get_batch()
                if x is None:
                    continue
                loss = model(x, y)
                loss.backward()
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-0.1)
            """,
            """
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
            """,
            note="manual-update-and-continue",
            findings=(Expected(13, 5, "training loop"),),
        ),
        invalid(
            """
            import torch

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                for name in names:
                    if name in done:
                        break
                if i + 1 >= steps_per_epoch:
                    break
                if stop_requested(): log(i); break
                log(i)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for i, (x, y) in enumerate(loader):
                loss = loss_fn(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                xm.optimizer_step(optimizer)
                for name in names:
                    if name in done:
                        break
                if i + 1 >= steps_per_epoch:
                    torch_xla.sync()
                    break
                if stop_requested(): log(i); torch_xla.sync(); break
                log(i)
                torch_xla.sync()
            """,
            note="a-break-after-the-step-ends-its-iteration-with-the-barrier",
            findings=(Expected(19, 5, "training loop: torch_xla.sync() ends every iteration"),),
        ),
        invalid(
            """
            import torch

            class Trainer:
                def _run_batch(self, x):
                    self.optimizer.zero_grad()
                    self.model(x).sum().backward()
                    self.optimizer.step()

                def run(self):
                    while self.running:
                        self._run_batch(next(self.batches))
            """,
            """
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
            """,
            note="step-method",
            findings=(Expected(14, 13, "training loop"),),
        ),
        invalid(
            """
            import torch as th

            for x in batches:
                th.autograd.backward(model(x).sum())
            """,
            """
            import torch as th
            import torch_xla.core.xla_model as xm

            for x in batches:
                th.autograd.backward(model(x).sum())
                xm.mark_step()
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(6, 5, "training loop"),),
        ),
    ),
)

gives_loop_barriers(TRAINING_LOOP_BARRIER)
reports_overridden_loaders(TRAINING_LOOP_BARRIER)
on_facts(TRAINING_LOOP_BARRIER, nodes=lambda facts: facts.training.locked_steps)(
    barrier_after_locked_step(TRAINING_LOOP_BARRIER)
)


@on_facts(
    TRAINING_LOOP_BARRIER,
    nodes=lambda facts: [loop for loop, plan in facts.training.loops.items() if plan.kind == "training"],
)
def _barrier(ctx: Context[Facts], original: cst.For | cst.While, updated: cst.For | cst.While) -> cst.For | cst.While:
    from codemods.engine.barriers import with_barriers

    plan = ctx.facts.training.loops[original]
    if plan.locked:  # the barrier goes inside the lock (locked_barriers.py)
        report_unplaceable(ctx, TRAINING_LOOP_BARRIER, original, plan.locked)
        return updated
    loader = plan.wrap_loader
    if loader is not None and ctx.fixed(DEVICE_LOADER, loader):
        return updated
    return with_barriers(ctx, TRAINING_LOOP_BARRIER, original, updated, "training loop: {new} ends every iteration")
