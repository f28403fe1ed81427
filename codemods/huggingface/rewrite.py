"""Hugging Face Trainer scripts and Accelerate (XLA801, XLA802, XLA804-XLA807).

``TrainingArguments(...)`` gets ``optim="adamw_torch_xla"``; arguments parsed with
HfArgumentParser get it right after parsing, where they still hold the default torch
AdamW (an explicit ``--optim`` of another optimizer is kept).  Tokenizer calls that pad
to the longest sequence pad to their ``max_length``.  The rest is reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.engine.nodes import quoted_like, string_value, with_keyword
from codemods.engine.rewriter import Concern, Context
from codemods.huggingface.analysis import TORCH_ADAMW, XLA_ADAMW_FORMS, XLA_OPTIMIZER
from codemods.huggingface.facts import ModelPlacement, ParsedArguments
from codemods.huggingface.rules.xla801_trainer_xla_optimizer import TRAINER_XLA_OPTIMIZER
from codemods.huggingface.rules.xla802_trainer_one_device import TRAINER_ONE_DEVICE
from codemods.huggingface.rules.xla804_static_padding import STATIC_PADDING
from codemods.huggingface.rules.xla805_padding_length import PADDING_LENGTH
from codemods.huggingface.rules.xla806_input_workers import INPUT_WORKERS
from codemods.huggingface.rules.xla807_accelerate_loop import ACCELERATE_LOOP
from codemods.huggingface.rules.xla808_model_placement import MODEL_PLACEMENT

if TYPE_CHECKING:
    from codemods.facts import Facts


class HuggingFaceRewrite(Concern):
    facts: Facts

    def __init__(self, ctx: Context[Facts]) -> None:
        super().__init__(ctx)
        hf = self.facts.huggingface
        self.parsed: dict[cst.CSTNode, ParsedArguments] = {p.anchor: p for p in hf.parsed_arguments}
        self.workers = set(hf.default_workers)
        self.trainers = set(hf.trainers)
        self.backwards = set(hf.accelerate_backwards)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        hf = self.facts.huggingface
        if original in self.workers:
            self._workers(original)
        if original in self.trainers:
            self.ctx.report(
                TRAINER_ONE_DEVICE,
                original,
                "the Trainer places the model and batches on the XLA device and ends every step "
                "itself: with the changes reported here, nothing else is needed for one device",
            )
            if not hf.builds_arguments:
                self.ctx.report(
                    TRAINER_XLA_OPTIMIZER,
                    original,
                    f'set optim="{XLA_OPTIMIZER}" on the TrainingArguments of this Trainer',
                )
        if original in self.backwards:
            self.ctx.report(
                ACCELERATE_LOOP,
                original,
                "Accelerate loop: on XLA, Accelerate already places the model and batches, ends each "
                "step through its prepared loaders (MpDeviceLoader) and steps optimizers with xm.optimizer_step; "
                "nothing to port (launch it with an XLA accelerate config)",
            )
        for placement in hf.model_placements.get(original, ()):
            self._placement(placement)
        if original in hf.padding:
            return self._padding(original, updated)
        choice = hf.training_arguments.get(original)
        if choice is None:
            return updated
        if choice.action == "report":
            self.ctx.report(
                TRAINER_XLA_OPTIMIZER,
                original,
                f'its keywords come from **kwargs: make sure they set optim="{XLA_OPTIMIZER}"',
            )
            return updated
        if choice.action == "map":
            value = choice.value
            assert value is not None
            return self._map_optim(original, updated, value)
        if choice.action == "replace":
            value = choice.value
            assert value is not None
            new_args = [
                a.with_changes(value=quoted_like(value, XLA_OPTIMIZER))
                if a.keyword and a.keyword.value == "optim"
                else a
                for a in updated.args
            ]
            message = (
                f'optim={self.ctx.code(value)} -> "{XLA_OPTIMIZER}": {XLA_ADAMW_FORMS[string_value(value) or ""]} '
                "does not run on XLA; the sync-free AdamW for XLA computes the same"
            )
        else:
            new_args = with_keyword(list(updated.args), "optim", cst.SimpleString(f'"{XLA_OPTIMIZER}"'))
            message = (
                f'optim="{XLA_OPTIMIZER}" added: the sync-free AdamW (with torch >= 2.8 the default fused AdamW '
                "raises on XLA)"
            )
        return self.ctx.fix_or_keep(
            updated, TRAINER_XLA_OPTIMIZER, original, message, lambda: updated.with_changes(args=new_args)
        )

    def _map_optim(self, original: cst.Call, updated: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression:
        """``optim=optim`` (a variable, a flag): the AdamW spellings that do not run on XLA
        become adamw_torch_xla where it is given; any other choice is kept."""
        code = self.ctx.code(value)
        choices = ", ".join(f'"{o}"' for o in TORCH_ADAMW)
        mapped = cst.parse_expression(f'"{XLA_OPTIMIZER}" if {code} in ({choices}) else {code}')
        new_args = [
            a.with_changes(value=mapped) if a.keyword and a.keyword.value == "optim" else a for a in updated.args
        ]
        return self.ctx.fix_or_keep(
            updated,
            TRAINER_XLA_OPTIMIZER,
            original,
            f"optim={code} -> {{new}}: where `{code}` holds an AdamW that does not run on XLA ({choices}: torch's "
            "fused AdamW raises on XLA parameters, the others need CUDA or an NPU), the sync-free AdamW for XLA "
            "computes the same; any other choice is kept",
            lambda: updated.with_changes(args=new_args),
            result=lambda call: _keyword_value(call, "optim"),
        )

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        name = self.facts.huggingface.cuda_optimizers.get(original)
        if name is not None:
            self.ctx.report(
                TRAINER_XLA_OPTIMIZER,
                original,
                f'optim "{name}" is a bitsandbytes optimizer: its CUDA kernels do not run on XLA parameters (the '
                "Trainer's first step raises), and no optimizer of the Trainer computes the same on XLA: use "
                f'"{XLA_OPTIMIZER}" (AdamW with 32-bit states: more memory, and not the same updates)',
            )
        return updated

    def _placement(self, placement: ModelPlacement) -> None:
        argument = placement.argument
        written = f"`{argument.keyword.value if argument.keyword else ''}={self.ctx.code(argument.value)}`"
        if placement.values:
            written += " (" + " or ".join(_short(self.ctx.code(value)) for value in placement.values) + ")"
        move = "the Trainer (or `.to(device)`) moves the model to the XLA device"
        if placement.kind == "quantized":
            message = (
                f"{written} quantizes with bitsandbytes, which has no XLA kernels: load the model unquantized "
                f"(torch_dtype=torch.bfloat16 halves its memory on XLA); {move}"
            )
        elif placement.kind == "cuda":
            message = (
                f"{written} loads the model onto a CUDA device (a number is a CUDA ordinal), which raises "
                f"without CUDA: drop device_map, {move}"
            )
        else:
            message = (
                f"{written}: accelerate places the model on CUDA devices, else the CPU and the disk, never on "
                f"XLA: drop device_map, {move}"
            )
        self.ctx.report(MODEL_PLACEMENT, argument, message)

    def _workers(self, node: cst.CSTNode) -> None:
        self.ctx.report(
            INPUT_WORKERS,
            node,
            "dataloader_num_workers is left at 0: batches are prepared between steps while the device "
            "waits; use at least the number of devices per host (and fewer than its CPUs)"
            + (" (--dataloader_num_workers N)" if not isinstance(node, cst.Call) else ""),
        )

    def _padding(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        padding = self.facts.huggingface.padding[original]
        missing = " and ".join(f"{m}=" if m == "max_length" else "truncation=True" for m in padding.missing)
        if not padding.dynamic:
            self.ctx.report(
                PADDING_LENGTH,
                original,
                f'padding="max_length" without {missing}: '
                + (
                    "it pads to the tokenizer's model_max_length (may be huge or unset); "
                    if "max_length" in padding.missing
                    else ""
                )
                + "longer texts keep their own length, a new shape each",
            )
            return updated
        value = padding.value
        if not padding.fixable or value is None:
            what = f"padding={self.ctx.code(value)}" if value is not None else "the collator's default padding"
            self.ctx.report(
                STATIC_PADDING,
                original,
                f"{what} pads each batch to its longest sequence, a new shape to compile "
                f'each time: pass padding="max_length" with a fixed max_length (and truncation=True)',
            )
            return updated
        new_args = [
            a.with_changes(value=quoted_like(value, "max_length")) if a.keyword and a.keyword.value == "padding" else a
            for a in updated.args
        ]
        new = self.ctx.fix(
            STATIC_PADDING,
            original,
            f"padding={self.ctx.code(value)} -> {{new}}: one shape for every batch",
            lambda: updated.with_changes(args=new_args),
            result=lambda call: _keyword_value(call, "padding"),
        )
        if new is not None and padding.missing:
            self.ctx.report(
                PADDING_LENGTH, original, f"no {missing}: longer texts keep their own length, a new shape each"
            )
        return new if new is not None else updated

    # -- arguments parsed from the command line -----------------------------------------------

    def _after_parse(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:
        parsed = self.parsed.get(original)
        if parsed is None:
            return updated
        if original in self.workers:
            self._workers(original)
        name = parsed.name
        choices = ", ".join(f'"{o}"' for o in TORCH_ADAMW)
        statement = cst.parse_statement(f'if {name}.optim in ({choices}):\n    {name}.optim = "{XLA_OPTIMIZER}"\n')
        new = self.ctx.fix(
            TRAINER_XLA_OPTIMIZER,
            original,
            f'{name}.optim = "{XLA_OPTIMIZER}" after parsing, when it holds an AdamW that does not run on XLA '
            f"({choices}: the default, or a dataclass's or the command line's value, which are left as they are): "
            "the sync-free AdamW for XLA computes the same (with torch >= 2.8 the default fused AdamW raises on "
            "XLA; the others need CUDA or an NPU)",
            lambda: statement,
            result=lambda node: node,
        )
        if new is None:
            return updated
        return cst.FlattenSentinel([updated, new])

    leave_SimpleStatementLine = _after_parse
    leave_If = _after_parse

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        if original in self.facts.huggingface.default_preprocessing_workers:
            self.ctx.report(
                INPUT_WORKERS,
                original,
                "preprocessing_num_workers defaults to None: datasets.map runs in one process; "
                "pass --preprocessing_num_workers N",
            )
        return updated


def _keyword_value(call: cst.Call, keyword: str) -> cst.CSTNode:
    return next(a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword)


def _short(code: str, limit: int = 60) -> str:
    return code if len(code) <= limit else code[: limit - 3] + "..."
