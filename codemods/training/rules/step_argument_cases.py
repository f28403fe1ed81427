"""XLA201's cases for a step's positional argument: a closure only where the optimizer is
built by a torch.optim class or the argument is a lambda or a function of the file; on a
project's optimizer wrapper (``MultiOptimizer.step(key)``) the step stays as written; where the
project defines the wrapper and its own ``step`` steps the optimizer it holds (ported there), a
``self.optim.step(loss)`` on a name that says optimizer is that wrapper's step: nothing to report."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

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

_TRAINER_STEP = """

class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(self, batch):
        self.model(batch).sum().backward()
        self.opt.step()
"""

# The wrapper is a class of the project (here, defined in the class that builds it through a
# method): its ``step(loss)`` runs backward and steps the optimizer it holds.
_OWN_WRAPPER = """
import torch


class Algorithm(torch.nn.Module):
    class Optimizer:
        def __init__(self, optim):
            self._optim = optim

        def step(self, loss):
            self._optim.zero_grad()
            loss.backward()
            self._optim.step()

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.optim = self.make_optimizer(model)

    def make_optimizer(self, module):
        return self.Optimizer(torch.optim.Adam(module.parameters()))

    def update(self, batch):
        loss = self.model(batch).sum()
        self.optim.step(loss)
        return loss
"""
_OWN_WRAPPER_ALIASED = substituted(
    _OWN_WRAPPER, ("import torch\n", "import torch as th\n"), ("torch.nn", "th.nn"), ("torch.optim", "th.optim")
)


def step_argument_invalid() -> tuple[Invalid, ...]:
    kept = "has arguments other than a closure, and stays as written"
    inner = "self._optim.step() -> xm.optimizer_step(self._optim)"
    return (
        invalid(
            _OWN_WRAPPER,
            substituted(
                _OWN_WRAPPER,
                ("import torch\n", "import torch\nimport torch_xla.core.xla_model as xm\n"),
                ("            self._optim.step()", "            xm.optimizer_step(self._optim)"),
            ),
            note="own-wrapper-step-with-a-loss",
            findings=(Expected(13, 13, inner),),
        ),
        invalid(
            _OWN_WRAPPER_ALIASED,
            substituted(
                _OWN_WRAPPER_ALIASED,
                ("import torch as th\n", "import torch as th\nimport torch_xla.core.xla_model as xm\n"),
                ("            self._optim.step()", "            xm.optimizer_step(self._optim)"),
            ),
            target="sagemaker",
            alias=True,
            note="own-wrapper-step-with-a-loss-aliased",
            findings=(Expected(13, 13, inner),),
        ),
        invalid(
            _WRAPPER,
            _WRAPPER.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport torch_xla\n", 1)
            .replace('"cuda"', '"xla"')
            .replace("optimizer.step(KEY)\n", "optimizer.step(KEY)\n        torch_xla.sync()\n"),
            note="wrapper-step-key",
            findings=(Expected(14, 9, kept), Expected(15, 9, kept)),
        ),
        # A trainer's own ``step(batch)`` in the project is no optimizer wrapper's: the keyed steps
        # of the wrapper the tool cannot see stay errors.
        invalid(
            _WRAPPER + _TRAINER_STEP,
            _WRAPPER.replace(
                "import torch.nn as nn\n",
                "import torch.nn as nn\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
                1,
            )
            .replace('"cuda"', '"xla"')
            .replace("optimizer.step(KEY)\n", "optimizer.step(KEY)\n        torch_xla.sync()\n")
            + _TRAINER_STEP.replace("self.opt.step()", "xm.optimizer_step(self.opt)"),
            note="wrapper-step-key-beside-a-trainer-step",
            findings=(
                Expected(15, 9, kept),
                Expected(16, 9, kept),
                Expected(27, 9, "self.opt.step() -> xm.optimizer_step(self.opt)"),
            ),
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
