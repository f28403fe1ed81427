"""XLA301's cases for a loop that builds modules and their optimizers and stores them
(audiocraft's ``get_adversarial_losses``): a class constructed with the optimizer and the loss
function (``AdversarialLoss(adversary, optimizer, loss=loss)``) stores them, a method called later
steps it; no step runs in that loop, so it gets no barrier.  A function handed the same values in
the same loop (``train_adversary(adversary, optimizer, loss=loss)``) may run the step: a training loop."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, substituted, valid

_CONSTRUCTION = """
import torch
from torch import nn


class AdversarialLoss(nn.Module):
    def __init__(self, adversary, optimizer, loss):
        super().__init__()
        self.adversary = adversary
        self.optimizer = optimizer
        self.loss = loss


def get_adversarial_losses(cfg, make_adversary, loss):
    adv_losses = nn.ModuleDict()
    for name in cfg.adversaries:
        adversary = make_adversary(name).to(cfg.device)
        optimizer = torch.optim.Adam(adversary.parameters(), lr=cfg.lr)
        adv_losses[name] = AdversarialLoss(adversary, optimizer, loss=loss)
    return adv_losses
"""

_ALIASED = substituted(_CONSTRUCTION, ("import torch\n", "import torch as th\n"), ("torch.optim", "th.optim"))

_STEPPED = substituted(
    _CONSTRUCTION,
    ("        adv_losses[name] = AdversarialLoss(", "        adv_losses[name] = train_adversary("),
)

CONSTRUCTION_VALID: tuple[Valid, ...] = (
    valid(_CONSTRUCTION, note="a-loop-constructing-a-class-with-an-optimizer-and-a-loss-is-no-training-loop"),
    valid(_ALIASED, note="a-loop-constructing-a-class-with-an-optimizer-and-a-loss-is-no-training-loop-aliased"),
)

CONSTRUCTION_INVALID: tuple[Invalid, ...] = (
    invalid(
        _STEPPED,
        substituted(
            _STEPPED,
            ("from torch import nn\n", "from torch import nn\nimport torch_xla\n"),
            ("    return adv_losses\n", "        torch_xla.sync()\n    return adv_losses\n"),
        ),
        note="a-function-handed-an-optimizer-and-a-loss-in-a-construction-loop-trains",
        findings=(Expected(20, 9, "training loop: torch_xla.sync() ends every iteration"),),
    ),
    invalid(
        substituted(_STEPPED, ("import torch\n", "import torch as th\n"), ("torch.optim", "th.optim")),
        substituted(
            _STEPPED,
            ("import torch\n", "import torch as th\n"),
            ("from torch import nn\n", "from torch import nn\nimport torch_xla.core.xla_model as xm\n"),
            ("torch.optim", "th.optim"),
            ("    return adv_losses\n", "        xm.mark_step()\n    return adv_losses\n"),
        ),
        target="sagemaker",
        alias=True,
        note="a-function-handed-an-optimizer-and-a-loss-in-a-construction-loop-trains-aliased",
        findings=(Expected(20, 9, "training loop: xm.mark_step() ends every iteration"),),
    ),
)
