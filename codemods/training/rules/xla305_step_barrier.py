"""XLA305 step-barrier: a step that no loop runs (a demo that trains once) gets the step barrier
right after it, which runs the step's graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

# A project's optimizer wrapper whose own step steps what it holds (or lets a scaler do it), next
# to a function with a parameter named ``step``.
OPTIMIZER_WRAPPER = """
import torch


class Optimizer:
    def __init__(self, optimizer, scaler):
        self.optimizer = optimizer
        self._scaler = scaler

    def step(self):
        if self._scaler is not None:
            self._scaler.step(self.optimizer)
            self._scaler.update()
        else:
            self.optimizer.step()


def warmup(step):
    return min(1.0, float(step))
"""

# A runner whose step stands under a phase test, run once with the training phase.
PHASE_RUNNER = """
import torch


def make_runner(model, optimizer):
    def run(phase):
        loss = loss_fn(model(x), y)
        if phase == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()

    return run


def demo(model, optimizer):
    run = make_runner(model, optimizer)
    loss = run("train")
    print(loss)


demo(model, torch.optim.SGD(model.parameters(), lr=0.1))
"""

STEP_BARRIER = Rule(
    code="XLA305",
    name="step-barrier",
    severity="error",
    summary="An optimizer step that no loop runs is followed by the step barrier",
    fixable=True,
    why="In lazy mode nothing runs until a barrier or a host read: a script that trains one step outside any "
    "loop (a demo, a smoke test) would record the parameter update and never execute it.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(9, 5, "optimizer step outside any loop"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def train_step(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()


            for x, y in batches:
                train_step(model, optimizer, x, y)
            """,
            """
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
            """,
            note="step-function-in-a-loop",
        ),
        # An optimizer wrapper's own ``step`` is no training loop (the caller's loop gets the
        # barrier): a bare ``step`` (a variable) runs no method, a scaler's ``step`` no wrapper.
        *(
            valid(
                OPTIMIZER_WRAPPER,
                substituted(
                    OPTIMIZER_WRAPPER,
                    ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                    ("            self.optimizer.step()", "            xm.optimizer_step(self.optimizer)"),
                ),
                target=target,
                note=f"an-optimizer-wrappers-step-{target}",
            )
            for target in ("2.9", "sagemaker")
        ),
        # ``run("test")`` of a function that steps only under ``if phase == "train":`` takes no step.
        valid(
            """
            import torch


            def make_runner(model, optimizer):
                def run(phase):
                    loss = loss_fn(model(x), y)
                    if phase == "train":
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    return loss.item()

                return run


            def train(model, optimizer, epochs):
                run = make_runner(model, optimizer)
                for epoch in range(epochs):
                    run("train")
                accuracy = run(phase="test")
                print(accuracy)


            train(model, torch.optim.SGD(model.parameters(), lr=0.1), 3)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def make_runner(model, optimizer):
                def run(phase):
                    loss = loss_fn(model(x), y)
                    if phase == "train":
                        optimizer.zero_grad()
                        loss.backward()
                        xm.optimizer_step(optimizer)
                    return loss.item()

                return run


            def train(model, optimizer, epochs):
                run = make_runner(model, optimizer)
                for epoch in range(epochs):
                    run("train")
                    torch_xla.sync()
                accuracy = run(phase="test")
                print(accuracy)


            train(model, torch.optim.SGD(model.parameters(), lr=0.1), 3)
            """,
            note="another-phase-takes-no-step",
        ),
        valid(
            """
            import torch


            def make_runner(model, optimizer):
                def run(phase):
                    loss = loss_fn(model(x), y)
                    if phase == "train":
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    return loss.item()

                return run


            def train(model, optimizer, epochs):
                run = make_runner(model, optimizer)
                for epoch in range(epochs):
                    run("train")
                accuracy = run("test")
                print(accuracy)


            train(model, torch.optim.SGD(model.parameters(), lr=0.1), 3)
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def make_runner(model, optimizer):
                def run(phase):
                    loss = loss_fn(model(x), y)
                    if phase == "train":
                        optimizer.zero_grad()
                        loss.backward()
                        xm.optimizer_step(optimizer)
                    return loss.item()

                return run


            def train(model, optimizer, epochs):
                run = make_runner(model, optimizer)
                for epoch in range(epochs):
                    run("train")
                    xm.mark_step()
                accuracy = run("test")
                print(accuracy)


            train(model, torch.optim.SGD(model.parameters(), lr=0.1), 3)
            """,
            target="sagemaker",
            note="another-phase-takes-no-step-positional-sagemaker",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            from ignite.engine import Engine


            def train(model, optimizer, loader):
                def update(engine, batch):
                    loss_fn(model(batch)).backward()
                    optimizer.step()
                    return loss.item()

                trainer = Engine(update)
                metrics = {"loss": 0.0}
                metrics.update({"average": 1.0})
                trainer.run(loader, max_epochs=1)


            if __name__ == "__main__":
                train(model, optimizer, loader)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm
            from ignite.engine import Engine


            def train(model, optimizer, loader):
                def update(engine, batch):
                    loss_fn(model(batch)).backward()
                    xm.optimizer_step(optimizer)
                    torch_xla.sync()
                    return loss.item()

                trainer = Engine(update)
                metrics = {"loss": 0.0}
                metrics.update({"average": 1.0})
                trainer.run(loader, max_epochs=1)


            if __name__ == "__main__":
                train(model, optimizer, loader)
            """,
            note="a-dicts-update-is-not-the-engines-step-function",
            findings=(Expected(11, 9, "optimizer step outside any loop"),),
        ),
        invalid(
            """
            import torch


            def demo(model, optimizer, x, y):
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                print(model.weight)


            demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
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
                print(model.weight)


            demo(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
            """,
            note="demo-function",
            findings=(Expected(10, 5, "optimizer step outside any loop"),),
        ),
        invalid(
            """
            import torch.multiprocessing as mp
            import torch.optim as O


            def worker(rank):
                opt = O.SGD(model.parameters(), lr=0.1)
                loss_fn(model(x), y).backward()
                opt.step()


            if __name__ == "__main__":
                mp.spawn(worker, nprocs=1)
            """,
            """
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
            """,
            note="handed-to-a-launcher",
            alias=True,
            findings=(Expected(10, 5, "optimizer step outside any loop"),),
        ),
        invalid(
            PHASE_RUNNER,
            substituted(
                PHASE_RUNNER,
                ("import torch\n", "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"),
                ("optimizer.step()", "xm.optimizer_step(optimizer)"),
                ('loss = run("train")\n', 'loss = run("train")\n    torch_xla.sync()\n'),
            ),
            target="2.9",
            note="the-training-phase-once",
            findings=(Expected(21, 5, "optimizer step outside any loop"),),
        ),
        invalid(
            PHASE_RUNNER,
            substituted(
                PHASE_RUNNER,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ("optimizer.step()", "xm.optimizer_step(optimizer)"),
                ('loss = run("train")\n', 'loss = run("train")\n    xm.mark_step()\n'),
            ),
            target="sagemaker",
            note="the-training-phase-once-sagemaker",
            findings=(Expected(20, 5, "optimizer step outside any loop"),),
        ),
    ),
)


@on_facts(STEP_BARRIER, nodes=lambda facts: facts.training.lone_steps)
def _barrier(
    ctx: Context[Facts], original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
    import libcst as cst

    inserted: list[cst.SimpleStatementLine] = []

    def build() -> cst.FlattenSentinel[cst.BaseStatement] | None:
        sync = ctx.call("sync")
        if sync is None:
            return None
        inserted.append(cst.SimpleStatementLine(body=[cst.Expr(sync)]))
        return cst.FlattenSentinel([updated, inserted[0]])

    return ctx.fix_or_keep(
        updated,
        STEP_BARRIER,
        original,
        "optimizer step outside any loop: {new} after it runs the step's graph",
        build,
        result=lambda _: inserted[0],
    )
