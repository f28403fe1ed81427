"""XLA201's cases for optimizers reached through what holds them: an instance of a class kept
on another instance (``self.gan.opt_g``), and a list filled by ``append`` or built as one,
stepped through a loop over it (training/optimizer_lists.py)."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, invalid

_TWO_LEVEL = """
import torch
import torch.nn as nn


class GAN:
    def __init__(self, device):
        self.g = nn.Linear(4, 4).to(device)
        self.opt_g = torch.optim.Adam(self.g.parameters(), lr=1e-2)
        self.decay = torch.optim.lr_scheduler.StepLR(self.opt_g, 10)


class Runner:
    def __init__(self, device):
        self.gan = GAN(device)
        self.optims = []
        for net in (self.gan.g,):
            self.optims.append(torch.optim.SGD(net.parameters(), lr=0.1))

    def run(self, batches):
        for x in batches:
            self.gan.g(x).sum().backward()
            self.gan.opt_g.step()
            self.gan.decay.step()
            for opt in self.optims:
                opt.step()
"""
_BARRIER = {"2.9": ("import torch_xla\n", "torch_xla.sync()"), "sagemaker": ("", "xm.mark_step()")}


def _two_level(target: str) -> Invalid:
    first_import, barrier = _BARRIER[target]
    shift = first_import.count("\n")  # findings are on the lines of the output
    converted = (
        _TWO_LEVEL.replace(
            "import torch.nn as nn\n", f"import torch.nn as nn\n{first_import}import torch_xla.core.xla_model as xm\n"
        )
        .replace("self.gan.opt_g.step()", "xm.optimizer_step(self.gan.opt_g)")
        .replace("                opt.step()\n", f"                xm.optimizer_step(opt)\n            {barrier}\n")
    )
    return invalid(
        _TWO_LEVEL,
        converted,
        target=target,
        note=f"an-optimizer-of-an-instance-held-by-an-instance-and-a-list-filled-by-append-{target}",
        findings=(
            Expected(23 + shift, 13, "self.gan.opt_g.step() -> xm.optimizer_step(self.gan.opt_g)"),
            Expected(26 + shift, 17, "opt.step() -> xm.optimizer_step(opt)"),
        ),
    )


def held_optimizer_invalid() -> tuple[Invalid, ...]:
    return (
        _two_level("2.9"),
        _two_level("sagemaker"),
        invalid(
            """
            import torch.optim as O

            solvers = [O.Adam(net.parameters()) for net in nets]
            for x in loader:
                loss_fn(x).backward()
                for s in solvers:
                    s.step()
            """,
            """
            import torch.optim as O
            import torch_xla
            import torch_xla.core.xla_model as xm

            solvers = [O.Adam(net.parameters()) for net in nets]
            for x in loader:
                loss_fn(x).backward()
                for s in solvers:
                    xm.optimizer_step(s)
                torch_xla.sync()
            """,
            alias=True,
            note="a-list-of-optimizers-built-by-a-comprehension",
            findings=(Expected(9, 9, "s.step() -> xm.optimizer_step(s)"),),
        ),
    )
