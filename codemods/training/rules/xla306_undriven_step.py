"""XLA306 undriven-step: an optimizer step in a function that no loop of the converted files drives
has no step barrier, so the graph grows with every step.  Reported at the step; where files of the
run import the function's file, held until the run's files are seen (StandsUnlessCalled)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


UNDRIVEN_STEP = Rule(
    code="XLA306",
    name="undriven-step",
    severity="error",
    summary="An optimizer step in a function that no loop of the converted files drives",
    fixable=False,
    why="Obligation 4 of a port: one step barrier per optimizer step, in the loop that drives it. A step in a "
    "function (an agent's `update()`, a trainer's `train_step()`) gets its barrier in the loop that calls the "
    "function, followed across the functions and methods of the file and into the project's other modules, "
    "through the methods a class inherits from its bases (of its module or another); a loop that calls a method "
    "on a value whose class the tool cannot tell (a model a registry or `getattr(zoo, name)` builds, a "
    "parameter) drives the project's methods of that name that take a step (`model.optimize_parameters()`); "
    "for a name Python's containers define too (`agent.update(...)`), only where a call the tool cannot tell the "
    "class of built the value (`hydra.utils.instantiate(cfg.agent)`, whose class the configuration names; "
    "`make_agent(cfg)`) and the value's name says it may be that class: a word of it is part of the method's "
    "class name (`agent` for `DRQAgent.update`) or names a role (agent, learner, trainer, model, policy, algo, "
    "solver, actor, critic, net); such calls build meters and metrics as often, and a loop's "
    "`metrics.update(batch)` or `stats.update({...})` is no training step. A "
    "call in a test file (`tests/`, `test_*.py`, `*_test.py`) drives no step, and a unit test's own step, run "
    "once, is not reported. "
    "When no loop of the file calls it and no other file of the run imports the file, that loop is somewhere the "
    "tool did not see: it is still CUDA code, nothing cuts the lazy graph, and it grows with every step until "
    "compiling it runs out of memory. Convert the project folder (the barrier then goes at the end of the "
    "driving loop's iteration), or end each call with the step barrier. An optimizer class's own `step` (a "
    "two-step optimizer's `step(closure)`) is the optimizer's API: the loop that calls `optimizer.step()` "
    "drives it, and gets the barrier, so it is never reported. A call of another module's method that runs only a "
    "backward pass (a loss scaler's `backward(loss)`, `(loss * scale).backward()`) takes no optimizer step: the "
    "step, and its barrier, are where its caller steps the optimizer.",
    examples=lambda: (
        invalid(
            """
            import torch

            class Agent:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.cuda()).mean().backward()
                    self.optimizer.step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            class Agent:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.Adam(self.net.parameters())

                def update(self, batch):
                    self.optimizer.zero_grad()
                    self.net(batch.to(torch_xla.device())).mean().backward()
                    xm.optimizer_step(self.optimizer)
            """,
            findings=(
                Expected(13, 9, "`self.optimizer.step()` in `Agent.update` has no step barrier: no loop of this file"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm


            class TwoStep(torch.optim.Optimizer):
                def __init__(self, params, base_cls, **kwargs):
                    super().__init__(params, dict(**kwargs))
                    self.base_optimizer = base_cls(self.param_groups, **kwargs)

                def second_step(self):
                    xm.optimizer_step(self.base_optimizer)
                    self.zero_grad()

                def step(self, closure=None):
                    closure = torch.enable_grad()(closure)
                    closure()
                    self.second_step()
            """,
            note="an optimizer class's own step: the loop that calls optimizer.step() drives it",
        ),
        valid(
            """
            import torch

            model = torch.nn.Linear(4, 2).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)


            def timed(closure, log=False):
                result = closure()
                return result


            def train_step():
                opt.zero_grad()
                model(torch.randn(8, 4).cuda()).sum().backward()
                opt.step()


            for step in range(10):
                timed(train_step)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)


            def timed(closure, log=False):
                result = closure()
                return result


            def train_step():
                opt.zero_grad()
                model(torch.randn(8, 4).to(torch_xla.device())).sum().backward()
                xm.optimizer_step(opt)


            for step in range(10):
                timed(train_step)
                torch_xla.sync()
            """,
            note="a step function handed to a function of the file that calls it: the loop of that call drives it",
        ),
        valid(
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


            def run(agent, episodes):
                for episode in range(episodes):
                    agent.update(torch.randn(8, 4))


            def main():
                agent = Agent()
                run(agent, 10)
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


            def run(agent, episodes):
                for episode in range(episodes):
                    agent.update(torch.randn(8, 4))
                    torch_xla.sync()


            def main():
                agent = Agent()
                run(agent, 10)
            """,
            note="driven-by-a-loop-in-another-function",
        ),
        valid(
            """
            import torch
            import torch_xla.distributed.parallel_loader as pl


            class Trainer:
                def __init__(self, model, optimizer, loader, device):
                    self.model, self.optimizer = model, optimizer
                    self.loader = pl.MpDeviceLoader(loader, device)

                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.optimizer.step()

                def fit(self):
                    for x, y in self.loader:
                        self.train_step(x, y)
            """,
            """
            import torch
            import torch_xla.distributed.parallel_loader as pl
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, model, optimizer, loader, device):
                    self.model, self.optimizer = model, optimizer
                    self.loader = pl.MpDeviceLoader(loader, device)

                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    xm.optimizer_step(self.optimizer)

                def fit(self):
                    for x, y in self.loader:
                        self.train_step(x, y)
            """,
            note="driven-by-a-loop-over-a-device-loader",
        ),
        valid(
            """
            import lightning as L
            import torch


            class Model(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False
                    self.net = torch.nn.Linear(4, 1)

                def training_step(self, batch, batch_idx):
                    opt = self.optimizers()
                    opt.zero_grad()
                    self.manual_backward(self.net(batch).sum())
                    opt.step()
            """,
            note="lightning-drives-the-steps",
        ),
        valid(
            """
            from accelerate import Accelerator

            accelerator = Accelerator()


            def train_step(model, optimizer, batch):
                accelerator.backward(model(batch).sum())
                optimizer.step()
                optimizer.zero_grad()
            """,
            note="accelerate-drives-the-steps",
        ),
        valid(
            """
            import torch
            import torch_xla.core.xla_model as xm


            def train_step(model, optimizer, scaler, batch):
                scaler.scale(model(batch).sum()).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="already-xla-code-whose-driver-is-elsewhere",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            class Trainer:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def second_step(self):
                    self.optimizer.step()
                    self.optimizer.zero_grad()

                def step(self, batch):
                    self.net(batch.cuda()).sum().backward()
                    self.second_step()
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Trainer:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def second_step(self):
                    xm.optimizer_step(self.optimizer)
                    self.optimizer.zero_grad()

                def step(self, batch):
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    self.second_step()
            """,
            findings=(
                Expected(17, 9, "`self.second_step()` in `Trainer.step` has no step barrier: no loop of this file"),
            ),
            note="a step method of a class that is no optimizer",
        ),
        invalid(
            """
            import torch

            model = torch.nn.Linear(4, 2).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            hooks = []


            def register(hook):
                hooks.append(hook)


            def train_step():
                opt.zero_grad()
                model(torch.randn(8, 4).cuda()).sum().backward()
                opt.step()


            for step in range(10):
                register(train_step)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            model = torch.nn.Linear(4, 2).to(torch_xla.device())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            hooks = []


            def register(hook):
                hooks.append(hook)


            def train_step():
                opt.zero_grad()
                model(torch.randn(8, 4).to(torch_xla.device())).sum().backward()
                xm.optimizer_step(opt)


            for step in range(10):
                register(train_step)
            """,
            note="a step function handed to a function that only stores it: no loop runs it",
            findings=(
                Expected(
                    17,
                    5,
                    "`opt.step()` in `train_step` has no step barrier: no loop of this file calls `train_step`, and no "
                    "other file of this run imports this one (a function handed to a callable is followed only into "
                    "functions of this file that call it)",
                ),
            ),
        ),
        invalid(
            """
            from torch import optim as O


            def train_step(model, batch):
                opt = O.SGD(model.parameters(), lr=0.1)
                model(batch.cuda()).sum().backward()
                opt.step()
            """,
            """
            from torch import optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm


            def train_step(model, batch):
                opt = O.SGD(model.parameters(), lr=0.1)
                model(batch.to(torch_xla.device())).sum().backward()
                xm.optimizer_step(opt)
            """,
            alias=True,
            findings=(Expected(9, 5, "`opt.step()` in `train_step` has no step barrier"),),
        ),
        invalid(
            """
            import torch


            class Learner:
                def __init__(self, net):
                    self.net = net.cuda()
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def update(self, batch):
                    self.net(batch.cuda()).sum().backward()
                    self.optimizer.step()

                def learn(self, batch):
                    self.update(batch)
                    return self.net
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            class Learner:
                def __init__(self, net):
                    self.net = net.to(torch_xla.device())
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def update(self, batch):
                    self.net(batch.to(torch_xla.device())).sum().backward()
                    xm.optimizer_step(self.optimizer)

                def learn(self, batch):
                    self.update(batch)
                    return self.net
            """,
            note="the-outermost-step-function-is-named",
            findings=(
                Expected(
                    16,
                    9,
                    "`self.update(batch)` in `Learner.learn` has no step barrier: no loop of this file calls `Learner.learn`",
                ),
            ),
        ),
        invalid(
            """
            import torch


            def train_step(model, optimizer, batch):
                optimizer.zero_grad()
                model(batch.cuda()).sum().backward()
                optimizer.step()
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def train_step(model, optimizer, batch):
                optimizer.zero_grad()
                model(batch.to(xm.xla_device())).sum().backward()
                xm.optimizer_step(optimizer)
            """,
            target="sagemaker",
            note="sagemaker-names-its-barrier",
            findings=(Expected(8, 5, "or call xm.mark_step() after each call of `train_step`"),),
        ),
    ),
)


@on_facts(UNDRIVEN_STEP, nodes=lambda facts: facts.training.undriven_steps)
def _undriven(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    from codemods.training.held_conditions import StandsUnlessCalled

    undriven = ctx.facts.training.undriven_steps[original]
    method = undriven.function.rsplit(".", 1)[-1]
    # ``update``, ``get``: a loop's ``meters.update(...)`` on a value of unknown class is a dict's
    # as often as an agent's; only a value a call of unknown class built counts (project/callee_origins.py).
    container = (
        f" (`{method}` is a method of Python's containers too: only a value that a call the tool cannot tell "
        "the class of built counts, `agent = hydra.utils.instantiate(cfg.agent)` or `agent = make_agent(cfg)`, "
        "not a parameter, and only where its name says it may be that class: not `metrics`, `stats`)"
        if undriven.container
        else ""
    )
    runs = f", which runs the optimizer step of {undriven.origin}," if undriven.origin else ""
    barrier = ctx.target.api("sync").spelled
    nowhere = (
        f"no loop of this file calls `{undriven.function}`, nor any loop that the tool could follow in the files "
        "of this run that import it"
        if undriven.imported
        else f"no loop of this file calls `{undriven.function}`, no other file of this run imports this one, and "
        f"none of their loops calls a method of that name on a value whose class the tool cannot tell{container}"
        if undriven.held
        else f"no loop of this file calls `{undriven.function}`, and no other file of this run imports this one"
    )
    # Where files of this run import this one, the run converts them already: only the call's barrier is left.
    # Where it converts other files (a project folder), the script whose loop calls it may be one of them.
    advice = (
        f"call {barrier}() after each call of `{method}` in the loop that calls it"
        if undriven.imported
        else "if the script whose loop calls it is not in this run, convert it with this file (the barrier goes "
        f"there); else call {barrier}() after each call of `{method}` in that loop"
        if undriven.held
        else "convert the project folder with the script whose loop calls it (the barrier goes there), or call "
        f"{barrier}() after each call of `{method}`"
    )
    ctx.report(
        UNDRIVEN_STEP,
        original,
        f"`{ctx.code(original)}` in `{undriven.function}`{runs} has no step barrier: {nowhere} (a function "
        f"handed to a callable is followed only into functions of this file that call it), so the graph would "
        f"grow with every step; {advice}",
        held=StandsUnlessCalled(undriven.function) if undriven.held else None,
    )
    return updated
