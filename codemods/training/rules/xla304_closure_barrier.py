"""XLA304 closure-barrier: an optimizer closure runs once per inner iteration of LBFGS, so it
ends with the step barrier before it returns, which keeps each of those graphs small (without
it the whole step is one graph that grows with every inner iteration)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

CLOSURE_BARRIER = Rule(
    code="XLA304",
    name="closure-barrier",
    severity="error",
    summary="An optimizer closure (LBFGS) ends with the step barrier",
    fixable=True,
    why="LBFGS calls its closure several times per step; without a barrier in the closure each call grows one "
    "graph, compiled anew at every inner iteration until the compiler runs out of memory.",
    examples=lambda: (
        invalid(
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
            findings=(Expected(9, 5, "optimizer closure `closure`"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                optimizer.step()
                return loss
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                xm.optimizer_step(optimizer)
                return loss
            """,
            note="a-function-called-directly-is-no-optimizer-closure",
        ),
        valid(
            """
            import torch


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                optimizer.step()
                return loss
            """,
            """
            import torch
            import torch_xla.core.xla_model as xm


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                xm.optimizer_step(optimizer)
                return loss
            """,
            target="sagemaker",
            note="a-function-called-directly-is-no-optimizer-closure-sagemaker",
        ),
        valid(
            """
            import torch

            def closure():
                return criterion(model(x), y)

            print(closure())
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch


            def lbfgs_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                optimizer.step(closure)


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                optimizer.step()
                return loss
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def lbfgs_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    torch_xla.sync()
                    return loss

                xm.optimizer_step(optimizer, optimizer_args={"closure": closure})


            def take_step(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                loss = closure()
                xm.optimizer_step(optimizer)
                return loss
            """,
            note="only-the-closure-handed-to-the-step-gets-the-barrier",
            findings=(Expected(11, 9, "optimizer closure `closure`"),),
        ),
        invalid(
            """
            import torch


            def make_closure(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    return loss

                return closure


            def train(model, optimizer, loader):
                for batch in loader:
                    closure = make_closure(model, optimizer, batch)
                    optimizer.step(closure)
            """,
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm


            def make_closure(model, optimizer, batch):
                def closure():
                    optimizer.zero_grad()
                    loss = model(batch).sum()
                    loss.backward()
                    torch_xla.sync()
                    return loss

                return closure


            def train(model, optimizer, loader):
                for batch in loader:
                    closure = make_closure(model, optimizer, batch)
                    xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
                    torch_xla.sync()
            """,
            note="a-closure-a-factory-returns-to-the-step",
            findings=(Expected(11, 9, "optimizer closure `closure`"),),
        ),
        invalid(
            """
            import torch

            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
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
                loss = criterion(model(x), y)
                loss.backward()
                torch_xla.sync()
                return loss

            xm.optimizer_step(optimizer, optimizer_args={"closure": closure})
            """,
            findings=(Expected(9, 5, "optimizer closure `closure`"),),
        ),
        invalid(
            """
            import torch.optim as O

            opt = O.LBFGS(params)

            def fit():
                opt.zero_grad()
                loss = loss_fn()
                loss.backward()
                return loss

            opt.step(closure=fit)
            """,
            """
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
            """,
            target="sagemaker",
            alias=True,
            findings=(Expected(10, 5, "optimizer closure `fit`"),),
        ),
    ),
)


@on_facts(CLOSURE_BARRIER, nodes=lambda facts: facts.training.closures)
def _barrier(ctx: Context[Facts], original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
    import libcst as cst

    from codemods.engine.barriers import with_barriers

    return with_barriers(
        ctx,
        CLOSURE_BARRIER,
        original,
        updated,
        f"optimizer closure `{original.name.value}`: {{new}} before it returns (LBFGS compiles a new "
        "graph per inner iteration until its history is full: keep history_size small)",
        exits=(cst.Return,),
    )
