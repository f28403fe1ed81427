"""XLA303's cases of loops that run inside a step someone else ends: a transformers Trainer
subclass's ``compute_loss`` looping over a model's heads (the Trainer's step places the barrier on
XLA), and a transformers model's ``_reorder_cache`` looping over its layers' caches inside each
decoding step of ``generate()``. Neither is an evaluation loop; a loop over a loader that
accumulates device values, even with a host read per batch, still is."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Valid, invalid, valid, with_barrier

STEP_LOOPS_WHY = (
    "Nor is a loop in a transformers Trainer subclass's `compute_loss`, `training_step` or `prediction_step` (Medusa's "
    "`for i in range(heads):` loss per head, with a `.item()` per head for the log; or a method they call through "
    "`self`): the Trainer's own step ends with its barrier on XLA; nor one in a model's hooks that `generate()` "
    "calls in each decoding step (`_reorder_cache` over its layers' caches for beam search, "
    "`prepare_inputs_for_generation`). A Trainer subclass's own loop over a loader (`def score(self, model, loader)`) "
    "still is an evaluation loop."
)

# Medusa's shape: a loss per head of a model's output, with a top-k accuracy read per head; XLA711 and
# XLA712 use it too (the head index and ``k`` run the same constant range every step).
TRAINER_HEADS = """
import transformers
from torch.nn import CrossEntropyLoss


class HeadsTrainer(transformers.Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        logits = model(input_ids=inputs["input_ids"])
        labels = inputs["labels"]
        loss = 0
        for i in range(model.heads):
            head_logits = logits[i, :, : -(2 + i)].flatten(0, 1)
            head_labels = labels[..., 2 + i :].flatten()
            head_labels = head_labels.to(head_logits.device)
            loss_i = CrossEntropyLoss()(head_logits, head_labels)
            loss += loss_i
            for k in range(1, 2):
                _, top = head_logits.topk(k, dim=-1)
                self.hits.append(top.eq(head_labels.unsqueeze(-1)).float().mean().item())
        return loss
"""


def step_loop_valid() -> tuple[Valid, ...]:
    return (
        valid(TRAINER_HEADS, note="a-trainer-subclasss-compute-loss-loops-over-heads-inside-the-step"),
        valid(
            """
            from transformers import Trainer as HFTrainer


            class Base(HFTrainer):
                pass


            class HeadsTrainer(Base):
                def training_step(self, model, inputs):
                    return self.head_losses(model(**inputs), inputs["labels"])

                def head_losses(self, logits, labels):
                    loss = 0
                    for i in range(len(logits)):
                        target = labels[i]
                        target = target.to(logits.device)
                        loss += (logits[i] - target).abs().mean()
                    return loss
            """,
            target="sagemaker",
            note="alias-a-trainer-subclasss-training-step-and-the-method-it-calls",
        ),
        valid(
            """
            from transformers import PreTrainedModel


            class KVBase(PreTrainedModel):
                pass


            class KVLlama(KVBase):
                @staticmethod
                def _reorder_cache(past_key_values, beam_idx):
                    reordered = ()
                    for layer_past in past_key_values:
                        reordered += (tuple(p.index_select(0, beam_idx.to(p.device)) for p in layer_past),)
                    return reordered
            """,
            note="a-models-reorder-cache-loops-over-layers-inside-generate",
        ),
    )


# A Trainer subclass's own evaluation loop over a loader, accumulating on the device and reading each iteration.
_EVAL_TRAINER = """
import torch
import transformers


class EvalTrainer(transformers.Trainer):
    def score(self, model, loader):
        total = 0
        for ids in loader:
            ids = ids.to(self.args.device)
            out = model(ids)
            total += out.sum()
            print(out.mean().item())
        return total
"""


def step_loop_invalid() -> tuple[Invalid, ...]:
    return (
        invalid(
            _EVAL_TRAINER,
            with_barrier(_EVAL_TRAINER, "            print(out.mean().item())\n"),
            note="a-trainer-subclasss-own-loop-over-a-loader-evaluates",
            findings=(Expected(14, 13, "evaluation loop over the device that accumulates device values into `total`"),),
        ),
    )
