"""XLA802 trainer-one-device."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import reports_facts
from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid
from codemods.huggingface.rules.programs import _ENTRY, _TRAINER

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


TRAINER_ONE_DEVICE = Rule(
    code="XLA802",
    name="trainer-one-device",
    severity="info",
    summary="A Trainer script needs nothing else for one device: the Trainer places data and ends steps itself",
    fixable=False,
    why="On XLA the Trainer moves the model and batches to the device, wraps its loaders in MpDeviceLoader "
    "and reads losses only at logging steps; distributed runs call `_mp_fn(index)`. A Trainer subclass whose "
    "`get_train_dataloader` returns a loader `self.accelerator.prepare` never wrapped gets no step barrier: "
    "this finding says so, and XLA301 reports the override.",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=_ENTRY),
            findings=(
                Expected(6, 5, "the Trainer places the model and batches on the XLA device and ends every step itself"),
            ),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoModel

            model = AutoModel.from_pretrained("bert-base-uncased")
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers as hf


            class MyTrainer(hf.Trainer):
                pass


            MyTrainer(model=model, args=training_args).train()
            """,
            alias=True,
            findings=(
                Expected(8, 1, "the Trainer places the model and batches on the XLA device and ends every step itself"),
            ),
        ),
        *(
            invalid(
                """
                from torch.utils.data import DataLoader
                from transformers import Trainer


                class MyTrainer(Trainer):
                    def get_train_dataloader(self):
                        return DataLoader(self.train_dataset, batch_size=8)


                MyTrainer(model=model, args=training_args).train()
                """,
                target=target,
                note=f"trainer-whose-loader-is-not-prepared-{target}",
                findings=(Expected(10, 1, "but it does not end the steps of `MyTrainer`"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            from transformers import Trainer

            trainer = Trainer(model=model, args=training_args, train_dataset=train_set)
            trainer.train()
            """,
            findings=(
                Expected(
                    3, 11, "the Trainer places the model and batches on the XLA device and ends every step itself"
                ),
            ),
        ),
    ),
)


@reports_facts(TRAINER_ONE_DEVICE, nodes=lambda facts: set(facts.huggingface.trainers))
def _report(ctx: Context[Facts], original: cst.Call) -> str:
    if (unbarriered := ctx.facts.huggingface.unbarriered_calls.get(original)) is not None and unbarriered[2]:
        return (
            "the Trainer places the model and batches on the XLA device, but it does not end the steps of "
            f"`{unbarriered[0]}`: its `get_train_dataloader` returns a loader `self.accelerator.prepare` never "
            "wrapped, and the Trainer's step barrier is that prepared loader's (see XLA301)"
        )
    return (
        "the Trainer places the model and batches on the XLA device and ends every step "
        "itself: with the changes reported here, nothing else is needed for one device"
    )
