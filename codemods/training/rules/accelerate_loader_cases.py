"""XLA301's cases of an Accelerate script whose training loop runs over a loader Accelerate did not
prepare (``model, opt = accelerator.prepare(model, opt)``, then ``for x in DataLoader(...)``):
neither ``accelerator.backward`` nor the prepared optimizer's step ends the XLA step (accelerate
1.15, optimizer.py), only a prepared loader's MpDeviceLoader or the accelerator's gather, reduce and
accumulate do; so the loop gets the barrier, and a loop over a prepared loader, or one that gathers
every step, is left to Accelerate."""

from __future__ import annotations

from codemods.engine.rule import BARRIERS, Expected, Invalid, Valid, invalid, substituted, valid, with_barrier

UNPREPARED_LOADER = """
import torch
from accelerate import Accelerator


def main():
    acc = Accelerator()
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, opt = acc.prepare(model, opt)
    loader = torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=8, drop_last=True)
    for step, x in enumerate(loader):
        x = x.to(acc.device)
        loss = model(x).pow(2).mean()
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
"""


def accelerate_loader_invalid() -> tuple[Invalid, ...]:
    return tuple(
        invalid(
            UNPREPARED_LOADER,
            with_barrier(UNPREPARED_LOADER, "        opt.zero_grad()\n", target=target),
            target=target,
            note=f"accelerate-loop-over-an-unprepared-loader-{target}",
            findings=(Expected(18, 9, f"training loop: {barrier} ends every iteration"),),
        )
        for target, (_, barrier) in BARRIERS.items()
    )


def accelerate_loader_valid() -> tuple[Valid, ...]:
    return (
        *(
            valid(
                substituted(
                    UNPREPARED_LOADER,
                    ("    model, opt = acc.prepare(model, opt)\n", ""),
                    (
                        "drop_last=True)\n",
                        "drop_last=True)\n    model, opt, loader = acc.prepare(model, opt, loader)\n",
                    ),
                ),
                target=target,
                note=f"accelerate-loop-over-a-prepared-loader-{target}",
            )
            for target in BARRIERS
        ),
        valid(
            substituted(
                UNPREPARED_LOADER,
                ("        opt.zero_grad()\n", "        opt.zero_grad()\n        acc.gather(loss.detach())\n"),
            ),
            note="accelerate-loop-over-an-unprepared-loader-that-gathers-every-step",
        ),
    )
