"""XLA301 at an override that hands an Accelerate training loop of its base class a loader
Accelerate did not prepare (trlx: ``AccelerateRLTrainer.learn`` iterates
``self.create_train_dataloader()``, abstract there; the PPO trainer, in another module, returns
``self.store.create_loader(...)``, a plain ``DataLoader``).  Neither ``accelerator.backward`` nor
a prepared optimizer's step ends the XLA step (accelerate 1.15, optimizer.py): only a prepared
loader's MpDeviceLoader does, so that loop's graph grows with every step.  The loop is the base's
(where the base is another module's, not in this file), so the finding is at the override's
return, reported, not fixed: preparing what it returns ends the steps.  The base's loop keeps its
XLA807 "cannot follow"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import BARRIERS, Expected, Invalid, Rule, Valid, invalid, substituted, valid
from codemods.training.rules.trainer_loader_cases import (
    TRAINER_LOADER_WHY,
    reports_trainer_loaders,
    trainer_loader_invalid,
    trainer_loader_valid,
)

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

OVERRIDDEN_WHY = (
    " A subclass's method (of the file, or of a module importing the base) that overrides one whose "
    "return an Accelerate training loop of its base iterates as its loader (`loader = "
    "self.create_train_dataloader()`, abstract there), and returns a loader `accelerator.prepare` "
    "never returned (`DataLoader(...)`, a function or method of the project returning one, "
    "`self.store.create_loader(...)` of an instance its class holds), is reported at that return: "
    "nothing ends that loop's XLA steps; preparing the loader there ends them." + TRAINER_LOADER_WHY
)

OVERRIDDEN_LOADER = """
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


class BaseTrainer:
    def __init__(self):
        self.accelerator = Accelerator()
        model = torch.nn.Linear(4, 2)
        self.opt = torch.optim.AdamW(model.parameters())
        self.model, self.opt = self.accelerator.prepare(model, self.opt)

    def create_train_dataloader(self):
        raise NotImplementedError

    def learn(self):
        loader = self.create_train_dataloader()
        for x in loader:
            self.accelerator.backward(self.model(x.to(self.accelerator.device)).sum())
            self.opt.step()
            self.opt.zero_grad()


class PPOTrainer(BaseTrainer):
    def create_train_dataloader(self):
        return DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)
"""

# The override returns what a method of an instance the trainer holds returns (trlx's rollout store).
HELD_STORE = substituted(
    OVERRIDDEN_LOADER,
    (
        "class PPOTrainer(BaseTrainer):\n",
        "class Store:\n    def create_loader(self, batch_size):\n"
        "        return DataLoader(torch.randn(64, 4), batch_size=batch_size, drop_last=True)\n\n\n"
        "class PPOTrainer(BaseTrainer):\n    def __init__(self):\n        super().__init__()\n"
        "        self.store = Store()\n\n",
    ),
    (
        "        return DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)\n",
        "        return self.store.create_loader(8)\n",
    ),
)

# trlx's loop: a batching iterator over the loader, a loop over each batch's micro-batches with the
# backward, the step after it; the loader is what the outer loop iterates.
NESTED = substituted(
    OVERRIDDEN_LOADER,
    (
        "        for x in loader:\n            self.accelerator.backward(self.model(x.to(self.accelerator.device)).sum())\n",
        "        for minibatch in iter(loader):\n            for x in minibatch.chunk(2):\n"
        "                self.accelerator.backward(self.model(x.to(self.accelerator.device)).sum())\n",
    ),
)

MESSAGE = "overrides the method whose loader the Accelerate training loop of `BaseTrainer`"


def overridden_loader_invalid() -> tuple[Invalid, ...]:
    return (
        *(
            invalid(
                OVERRIDDEN_LOADER,
                target=target,
                note=f"override-returns-an-unprepared-loader-{target}",
                findings=(Expected(26, 16, MESSAGE),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                HELD_STORE,
                target=target,
                note=f"override-returns-a-held-store-s-loader-{target}",
                findings=(Expected(35, 16, MESSAGE),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                NESTED,
                target=target,
                note=f"override-of-a-loop-over-micro-batches-{target}",
                findings=(Expected(27, 16, MESSAGE),),
            )
            for target in BARRIERS
        ),
        invalid(
            substituted(
                OVERRIDDEN_LOADER,
                ("from accelerate import Accelerator\n", "import accelerate as acc_lib\n"),
                ("from torch.utils.data import DataLoader\n", "from torch.utils import data as tud\n"),
                ("Accelerator()", "acc_lib.Accelerator()"),
                ("return DataLoader(", "return tud.DataLoader("),
            ),
            alias=True,
            note="override-returns-an-unprepared-loader-under-aliases",
            findings=(Expected(26, 16, MESSAGE),),
        ),
        *trainer_loader_invalid(),
    )


def overridden_loader_valid() -> tuple[Valid, ...]:
    return (
        *trainer_loader_valid(),
        *(
            valid(
                substituted(
                    OVERRIDDEN_LOADER,
                    ("        return DataLoader(", "        return self.accelerator.prepare(DataLoader("),
                    ("drop_last=True)\n", "drop_last=True))\n"),
                ),
                target=target,
                note=f"override-returns-a-prepared-loader-{target}",
            )
            for target in BARRIERS
        ),
    )


def reports_overridden_loaders(rule: Rule) -> None:
    """``rule`` (XLA301) reports each return of an override that hands its base's Accelerate
    training loop an unprepared loader, and each Trainer override that returns one."""
    reports_trainer_loaders(rule)

    @reports_facts(rule, nodes=lambda facts: set(facts.huggingface.unprepared_overrides))
    def _report(ctx: Context[Facts], original: cst.BaseExpression) -> str:
        base, method = ctx.facts.huggingface.unprepared_overrides[original]
        return (
            f"`{method}` {MESSAGE.replace('BaseTrainer', base)} iterates, and returns a loader Accelerate did not "
            "prepare: neither `accelerator.backward` nor a prepared optimizer's step ends the XLA step (only a "
            "prepared loader's MpDeviceLoader does), so that loop's graph grows with every step; return it "
            "prepared (`self.accelerator.prepare(loader)`)"
        )
