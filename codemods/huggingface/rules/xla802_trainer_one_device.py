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
    "and reads losses only at logging steps; distributed runs call `_mp_fn(index)`.",
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
    return (
        "the Trainer places the model and batches on the XLA device and ends every step "
        "itself: with the changes reported here, nothing else is needed for one device"
    )
