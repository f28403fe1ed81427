"""XLA201's cases for a step's positional argument: a closure only where the optimizer is
built by a torch.optim class or the argument is a lambda or a function of the file; on a
project's optimizer wrapper (``MultiOptimizer.step(key)``) the step stays as written."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

_WRAPPER = """
import torch
import torch.nn as nn

from optim_util import build_optimizer


def main(loader):
    model = {"enc": nn.Linear(4, 8).to("cuda"), "dec": nn.Linear(8, 1).to("cuda")}
    optimizer = build_optimizer({k: m.parameters() for k, m in model.items()}, lr=1e-2)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model["dec"](model["enc"](x.to("cuda"))), y.to("cuda")).backward()
        optimizer.step("enc")
        optimizer.step(KEY)
"""


def step_argument_invalid() -> tuple[Invalid, ...]:
    kept = "has arguments other than a closure, and stays as written"
    return (
        invalid(
            _WRAPPER,
            _WRAPPER.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla\n", 1)
            .replace('"cuda"', '"xla"')
            .replace("optimizer.step(KEY)\n", "optimizer.step(KEY)\n        torch_xla.sync()\n"),
            note="wrapper-step-key",
            findings=(Expected(14, 9, kept), Expected(15, 9, kept)),
        ),
        invalid(
            """
            import torch.optim as O

            lbfgs = O.LBFGS(params)
            lbfgs.step(fn)
            other_optimizer.step(lambda: loss_fn(model(x), y))
            """,
            """
            import torch.optim as O
            import torch_xla.core.xla_model as xm

            lbfgs = O.LBFGS(params)
            xm.optimizer_step(lbfgs, optimizer_args={"closure": fn})
            xm.optimizer_step(other_optimizer, optimizer_args={"closure": lambda: loss_fn(model(x), y)})
            """,
            alias=True,
            note="closure-arguments-alias",
            findings=(
                Expected(5, 1, "lbfgs.step(fn) -> xm.optimizer_step(lbfgs,"),
                Expected(6, 1, "other_optimizer.step(lambda: loss_fn(model(x), y)) -> xm.optimizer_step("),
            ),
        ),
    )
