"""XLA301's cases of an Accelerate script whose training loop runs over a loader Accelerate did not
prepare (``model, opt = accelerator.prepare(model, opt)``, then ``for x in DataLoader(...)``):
neither ``accelerator.backward`` nor the prepared optimizer's step ends the XLA step (accelerate
1.15, optimizer.py), only a prepared loader's MpDeviceLoader or the accelerator's gather, reduce and
accumulate do; so the loop gets the barrier, and a loop over a prepared loader, or one that gathers
every step, is left to Accelerate.  The loader may be built in the loop's function or returned by a
function or method of the file (``for batch in self.create_train_dataloader()``, trlx), under a
batching iterator of the file; one such a method returns through ``prepare`` is prepared."""

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

# trlx's shape: a method of the trainer returns a fresh DataLoader, a batching iterator of the
# project splits its batches, and the accelerator's backward and the prepared optimizer's step
# follow; nothing there ends the XLA step.
METHOD_LOADER = """
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


class MiniBatches:
    def __init__(self, loader, n):
        self.loader, self.n = loader, n

    def __iter__(self):
        for batch in self.loader:
            yield batch.chunk(self.n)


class Trainer:
    def __init__(self):
        self.accelerator = Accelerator()
        model = torch.nn.Linear(4, 2)
        self.opt = torch.optim.AdamW(model.parameters())
        self.model, self.opt = self.accelerator.prepare(model, self.opt)

    def create_train_dataloader(self):
        return DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)

    def learn(self):
        for minibatch in MiniBatches(self.create_train_dataloader(), 2):
            for micro in minibatch:
                loss = self.model(micro.to(self.accelerator.device)).sum()
                self.accelerator.backward(loss)
            self.opt.step()
            self.opt.zero_grad()
"""

# A module function returns the loader through a name; the loop binds it and enumerates it.
FUNCTION_LOADER = """
import torch
import accelerate as acc_lib
from torch.utils import data as tud


def make_loader(n):
    loader = tud.DataLoader(torch.randn(n, 8), batch_size=8, drop_last=True)
    return loader


def main():
    acc = acc_lib.Accelerator()
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, opt = acc.prepare(model, opt)
    train_loader = make_loader(64)
    for step, x in enumerate(train_loader):
        acc.backward(model(x.to(acc.device)).pow(2).mean())
        opt.step()
        opt.zero_grad()
"""


def accelerate_loader_invalid() -> tuple[Invalid, ...]:
    return (
        *_built_here(),
        *(
            invalid(
                METHOD_LOADER,
                with_barrier(
                    METHOD_LOADER,
                    "            self.opt.zero_grad()\n",
                    target=target,
                    imported_after="from torch.utils.data import DataLoader\n",
                ),
                target=target,
                note=f"accelerate-loop-over-a-loader-a-method-returns-{target}",
                findings=(Expected(33, 13, f"training loop: {barrier} ends every iteration"),),
            )
            for target, (_, barrier) in BARRIERS.items()
        ),
        *(
            invalid(
                FUNCTION_LOADER,
                with_barrier(
                    FUNCTION_LOADER,
                    "        opt.zero_grad()\n",
                    target=target,
                    imported_after="from torch.utils import data as tud\n",
                ),
                target=target,
                alias=True,
                note=f"accelerate-loop-over-a-loader-a-function-returns-{target}",
                findings=(Expected(22, 9, f"training loop: {barrier} ends every iteration"),),
            )
            for target, (_, barrier) in BARRIERS.items()
        ),
    )


def _built_here() -> tuple[Invalid, ...]:
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
        *(
            valid(
                substituted(
                    METHOD_LOADER,
                    (
                        "        return DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)\n",
                        "        return self.accelerator.prepare(DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True))\n",
                    ),
                ),
                target=target,
                note=f"accelerate-loop-over-a-loader-a-method-returns-prepared-{target}",
            )
            for target in BARRIERS
        ),
        valid(
            substituted(
                FUNCTION_LOADER,
                ("    train_loader = make_loader(64)\n", "    train_loader = acc.prepare(make_loader(64))\n"),
            ),
            note="accelerate-loop-over-a-loader-a-function-returns-then-prepared",
        ),
        valid(
            substituted(
                UNPREPARED_LOADER,
                ("        opt.zero_grad()\n", "        opt.zero_grad()\n        acc.gather(loss.detach())\n"),
            ),
            note="accelerate-loop-over-an-unprepared-loader-that-gathers-every-step",
        ),
    )
