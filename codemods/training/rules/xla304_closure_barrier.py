"""XLA304 closure-barrier."""

from __future__ import annotations

from codemods.engine.rule import Expected, Rule, invalid, valid

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
