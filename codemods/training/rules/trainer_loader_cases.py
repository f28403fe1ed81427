"""XLA301 at a transformers Trainer subclass's ``get_train_dataloader`` that returns a loader
``self.accelerator.prepare`` never wrapped (Transformers4Rec's ``T4RecDataLoader...from_schema(...)``),
and at a call of such a class of another module.  On XLA the Trainer ends each training step only
through its prepared loader (accelerate's MpDeviceLoaderWrapper: transformers 5.24 "relies on the
dataloader to insert mark_step each iteration"; it marks the step itself only at logging steps and
after the loop, and a prepared optimizer's step adds none), so such a loader's steps get no barrier
(huggingface/trainer_loaders.py).  Reported, not fixed: the loader is the project's to prepare."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import BARRIERS, Expected, Invalid, Rule, Valid, invalid, substituted, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

TRAINER_LOADER_WHY = (
    " A transformers Trainer subclass whose `get_train_dataloader` returns a loader "
    "`self.accelerator.prepare` never wrapped (not the base's, not through `super()`, not a torch_xla "
    "device loader; a helper method it defines is followed, one it does not define, `self._get_dataloader(...)` "
    "of transformers' Trainer or a mixin's, is not read and the override is left alone) is reported at that "
    "override, unless the file only evaluates or predicts with that class and no other file names it; and a call of such a class of another module (where the trainer "
    "may train: not one only evaluated with) at the "
    "call: on XLA the Trainer ends each training step only through its prepared loader's MpDeviceLoader "
    "(it marks the step itself only at logging steps), so those steps get no barrier."
)

TRAINER_LOADER = """
from torch.utils.data import DataLoader
from transformers import Trainer


class MyTrainer(Trainer):
    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)
"""

# Transformers4Rec's shape: a loader of the project's own, or one handed to the constructor.
PROJECT_LOADER = substituted(
    TRAINER_LOADER,
    (
        "        return DataLoader(",
        "        if self.given_loader is not None:\n            return self.given_loader\n"
        "        return make_loader(self.args.data_engine).from_schema(",
    ),
)

# A helper method the class defines is followed: this one returns an unprepared loader.
OWN_HELPER = substituted(
    TRAINER_LOADER,
    (
        "    def get_train_dataloader(self):\n"
        "        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)\n",
        "    def _loader(self, dataset):\n"
        "        return DataLoader(dataset, batch_size=self.args.per_device_train_batch_size)\n\n"
        "    def get_train_dataloader(self):\n"
        "        loader = self._loader(self.train_dataset)\n"
        "        return loader\n",
    ),
)
# transformers' own helper (5.24 ``Trainer._get_dataloader`` prepares what it builds), or a mixin's:
# a method the class does not define is not read, and the override is left alone.
BASE_HELPER = substituted(
    TRAINER_LOADER,
    (
        "        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)\n",
        "        return self._get_dataloader(\n"
        '            dataset=self.train_dataset, description="Training", batch_size=self._train_batch_size,\n'
        "            sampler_fn=self._get_train_sampler, is_training=True,\n"
        "        )\n",
    ),
)
MIXIN_HELPER = substituted(
    TRAINER_LOADER,
    (
        "class MyTrainer(Trainer):\n",
        "class LoaderMixin:\n"
        "    def build_loader(self, dataset):\n"
        "        return self.accelerator.prepare(DataLoader(dataset, batch_size=8))\n\n\n"
        "class MyTrainer(LoaderMixin, Trainer):\n",
    ),
    (
        "        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)\n",
        "        return self.build_loader(self.train_dataset)\n",
    ),
)
# A trainer of this file built and only evaluated: its training loader is never used.
EVALUATED_ONLY = (
    TRAINER_LOADER
    + """

trainer = MyTrainer(model=model, eval_dataset=dataset)
print(trainer.evaluate())
"""
)

LOADER_MESSAGE = "`MyTrainer.get_train_dataloader` overrides the Trainer's and returns a loader"


def trainer_loader_invalid() -> tuple[Invalid, ...]:
    return (
        *(
            invalid(
                TRAINER_LOADER,
                target=target,
                note=f"trainer-override-returns-an-unprepared-loader-{target}",
                findings=(Expected(6, 9, LOADER_MESSAGE),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                PROJECT_LOADER,
                target=target,
                note=f"trainer-override-returns-a-project-loader-{target}",
                findings=(Expected(6, 9, LOADER_MESSAGE),),
            )
            for target in BARRIERS
        ),
        *(
            invalid(
                OWN_HELPER,
                target=target,
                note=f"trainer-override-returns-its-own-helpers-unprepared-loader-{target}",
                findings=(Expected(9, 9, LOADER_MESSAGE),),
            )
            for target in BARRIERS
        ),
        invalid(
            substituted(
                TRAINER_LOADER,
                ("from torch.utils.data import DataLoader\n", "from torch.utils import data as tud\n"),
                ("from transformers import Trainer\n", "import transformers as hf\n"),
                ("(Trainer)", "(hf.Seq2SeqTrainer)"),
                ("return DataLoader(", "return tud.DataLoader("),
            ),
            alias=True,
            note="trainer-override-returns-an-unprepared-loader-under-aliases",
            findings=(Expected(6, 9, LOADER_MESSAGE),),
        ),
    )


def trainer_loader_valid() -> tuple[Valid, ...]:
    prepared = substituted(
        TRAINER_LOADER,
        ("        return DataLoader(", "        return self.accelerator.prepare(DataLoader("),
        ("batch_size)\n", "batch_size))\n"),
    )
    through_base = substituted(
        TRAINER_LOADER,
        (
            "        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size)\n",
            "        loader = super().get_train_dataloader()\n        return loader\n",
        ),
    )
    device_loader = substituted(
        TRAINER_LOADER,
        (
            "from torch.utils.data",
            "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\nfrom torch.utils.data",
        ),
        ("        return DataLoader(", "        return pl.MpDeviceLoader(DataLoader("),
        ("batch_size)\n", "batch_size), torch_xla.device())\n"),
    )
    return (
        *(valid(prepared, target=t, note=f"trainer-override-returns-a-prepared-loader-{t}") for t in BARRIERS),
        *(valid(through_base, target=t, note=f"trainer-override-calls-the-base-{t}") for t in BARRIERS),
        valid(device_loader, note="trainer-override-returns-a-device-loader"),
        *(valid(BASE_HELPER, target=t, note=f"trainer-override-returns-the-bases-helper-{t}") for t in BARRIERS),
        *(valid(MIXIN_HELPER, target=t, note=f"trainer-override-returns-a-mixins-helper-{t}") for t in BARRIERS),
        *(valid(EVALUATED_ONLY, target=t, note=f"trainer-only-evaluated-{t}") for t in BARRIERS),
        valid(
            substituted(TRAINER_LOADER, ("def get_train_dataloader", "def get_eval_dataloader")),
            note="trainer-eval-loader-override (the evaluation loop marks each step)",
        ),
    )


def reports_trainer_loaders(rule: Rule) -> None:
    """``rule`` (XLA301) reports each Trainer override returning an unprepared training loader, and
    each call of such a Trainer class of another module."""

    @reports_facts(rule, nodes=lambda facts: set(facts.huggingface.unbarriered_loaders))
    def _override(ctx: Context[Facts], original: cst.Name) -> str:
        cls = ctx.facts.huggingface.unbarriered_loaders[original]
        return (
            f"{LOADER_MESSAGE.replace('MyTrainer', cls)} `self.accelerator.prepare` never wrapped: {_WHY}; "
            f"return `self.accelerator.prepare(loader)` (or {_device_loader(ctx)})"
        )

    @reports_facts(
        rule,
        nodes=lambda facts: {
            c for c, (_, other, trains) in facts.huggingface.unbarriered_calls.items() if other and trains
        },
    )
    def _call(ctx: Context[Facts], original: cst.Call) -> str:
        cls = ctx.facts.huggingface.unbarriered_calls[original][0]
        return (
            f"`{cls}` (of another module of the project) trains on a loader its `get_train_dataloader` returns "
            f"without `self.accelerator.prepare`: {_WHY}; make that override return "
            f"`self.accelerator.prepare(loader)` (or {_device_loader(ctx)}); a run that "
            "converts that module reports the override, a run of this file alone does not change it"
        )


def _device_loader(ctx: Context[Facts]) -> str:
    return f"`pl.MpDeviceLoader(loader, {ctx.target.api('device').spelled}())`"


_WHY = (
    "on XLA the Trainer ends each training step only through its prepared loader's MpDeviceLoader (it marks "
    "the step itself only at logging steps), so these steps get no barrier and the graph grows until a log"
)
