"""XLA201's cases for a project's optimizer wrapper handed to a trainer (``Trainer(model,
loader, opt)`` with ``opt = Optimizer(...)``, a class of the file whose own ``step`` steps the
torch optimizer it holds): the wrapper's inner step is ported and the trainer's
``self.optim.step()`` stays as written (``xm.optimizer_step`` on the wrapper would read its
``param_groups``, which it has not, once several processes run).  A trainer handed a torch
optimizer has its step ported as before."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid, substituted

_HANDED_WRAPPER = """
import torch
from torch import optim


class Optimizer:
    def __init__(self, params):
        self.optimizer = optim.Adagrad(params, lr=0.05)

    def step(self):
        self.optimizer.step()


class Trainer:
    def __init__(self, model, loader, optim):
        self.model = model
        self.loader = loader
        self.optim = optim

    def train(self):
        for x in self.loader:
            self.model(x).sum().backward()
            self.optim.step()


def main(model, loader):
    opt = Optimizer(model.parameters())
    Trainer(model, loader, opt).train()
"""

_BOTH = """

def other(model, loader):
    Trainer(model, loader, optim.SGD(model.parameters(), lr=0.1)).train()
"""

_IMPORTS = (
    "from torch import optim\n",
    "from torch import optim\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n",
)
_INNER = ("        self.optimizer.step()", "        xm.optimizer_step(self.optimizer)")
_WHY = "self.optimizer.step() -> xm.optimizer_step(self.optimizer)"


def handed_wrapper_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _HANDED_WRAPPER,
            substituted(
                _HANDED_WRAPPER,
                _IMPORTS,
                _INNER,
                ("            self.optim.step()\n", "            self.optim.step()\n            torch_xla.sync()\n"),
            ),
            alias=True,
            note="optimizer-wrapper-handed-to-a-trainer",
            findings=(Expected(12, 9, _WHY),),
        ),
        invalid(
            _HANDED_WRAPPER,
            substituted(
                _HANDED_WRAPPER,
                ("from torch import optim\n", "from torch import optim\nimport torch_xla.core.xla_model as xm\n"),
                _INNER,
                ("            self.optim.step()\n", "            self.optim.step()\n            xm.mark_step()\n"),
            ),
            target="sagemaker",
            alias=True,
            note="optimizer-wrapper-handed-to-a-trainer-sagemaker",
            findings=(Expected(11, 9, _WHY),),
        ),
        # The trainer handed a torch optimizer: its step is ported (the wrapper's class is not there).
        invalid(
            substituted(
                _HANDED_WRAPPER, ("    opt = Optimizer(model.parameters())", "    opt = optim.SGD(model.parameters())")
            ),
            substituted(
                _HANDED_WRAPPER,
                _IMPORTS,
                _INNER,
                ("    opt = Optimizer(model.parameters())", "    opt = optim.SGD(model.parameters())"),
                (
                    "            self.optim.step()\n",
                    "            xm.optimizer_step(self.optim)\n            torch_xla.sync()\n",
                ),
            ),
            note="torch-optimizer-handed-to-a-trainer",
            findings=(Expected(12, 9, _WHY), Expected(24, 13, "self.optim.step() -> xm.optimizer_step(self.optim)")),
        ),
        # Also handed a torch optimizer built in the call: the receiver's class is not proven, and the step is ported.
        invalid(
            _HANDED_WRAPPER + _BOTH,
            substituted(
                _HANDED_WRAPPER + _BOTH,
                _IMPORTS,
                _INNER,
                (
                    "            self.optim.step()\n",
                    "            xm.optimizer_step(self.optim)\n            torch_xla.sync()\n",
                ),
            ),
            note="wrapper-and-torch-optimizer-handed-to-a-trainer",
            findings=(Expected(12, 9, _WHY), Expected(24, 13, "self.optim.step() -> xm.optimizer_step(self.optim)")),
        ),
    )
