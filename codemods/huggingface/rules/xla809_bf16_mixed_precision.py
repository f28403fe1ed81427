"""XLA809 bf16-mixed-precision: the Trainer's and Accelerate's fp16 mixed precision becomes bf16
where XLA autocasts to bfloat16 (``TrainingArguments(fp16=...)``, ``Accelerator(mixed_precision="fp16")``);
what cannot be moved over is reported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_calls, on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts

_RAISES = (
    "fp16 mixed precision raises on a TPU (accelerate 1.15's Accelerator, also the one the Trainer builds: "
    '"fp16 mixed precision requires a device in (...)"; on an XLA CPU or GPU device it runs fp16 autocast with '
    "a gradient scaler, as on CUDA); bf16 is the TPU's mixed precision"
)

BF16_MIXED_PRECISION = Rule(
    code="XLA809",
    name="bf16-mixed-precision",
    severity="error",
    summary='fp16 mixed precision of the Trainer or Accelerate -> bf16 (TrainingArguments(fp16=...), mixed_precision="fp16")',
    fixable=True,
    why="With transformers 5.24 and accelerate 1.15 (checked in their sources), `TrainingArguments(fp16=True)` "
    'itself does not raise: it sets the Trainer\'s mixed precision to "fp16", and the Accelerator the Trainer '
    'builds raises when the XLA runtime\'s device is a TPU ("fp16 mixed precision requires a device in (...)", '
    '`torch_xla.runtime.device_type() == "TPU"`); so does `Accelerator(mixed_precision="fp16")`. On an XLA '
    "device that is not a TPU (PJRT_DEVICE=CPU or CUDA) nothing raises: the forward runs under fp16 autocast on "
    "the XLA device and a GradScaler skips the steps whose gradients overflow, as on CUDA (run with "
    "PJRT_DEVICE=CPU). transformers 4.2x (torch_xla 1.13's era) raised in TrainingArguments on any XLA device "
    'but a GPU (`get_xla_device_type(self.device) != "GPU"`: a TPU or the CPU), 4.2.1 and before on any device '
    "but CUDA. On a TPU, the device most XLA runs of the 2.9 target use, fp16 stops the run: an error (on an "
    "XLA GPU, bf16 replaces a working fp16 with the other half precision). XLA's mixed precision on a TPU is "
    "bfloat16 (the 2.9 target's autocast), which needs no gradient scaler: `fp16=<value>` becomes "
    "`bf16=<value>` (the same choice, in the other precision; a `bf16=False` beside it goes), and "
    '`mixed_precision="fp16"` becomes "bf16" (a variable is mapped where it holds "fp16"). Where the '
    "call passes both fp16 and bf16 values the tool cannot read (or keywords from `**`, which may hold bf16: a "
    "second bf16 would raise a TypeError), the choice is the user's: an error, unless fp16 is off by default "
    "(`fp16=args.fp16` of a `store_true` flag or of a dataclass field False by default, `fp16=not args.no_fp16` "
    "of a `store_false` flag, in the same file): the run as given does not use fp16. "
    "The sagemaker target keeps fp16: the SageMaker Training Compiler runs XLA on GPUs, where "
    "transformers of its era (4.2x) accepted fp16 and AWS's examples use it. `--fp16` given on the command "
    "line to arguments parsed by HfArgumentParser is not followed.",
    examples=lambda: (
        invalid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", fp16=True, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", bf16=True, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            findings=(Expected(3, 8, "fp16=True -> bf16=True: fp16 mixed precision raises on a TPU"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", fp16=False, bf16=True, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
        ),
        valid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator(mixed_precision="bf16")
            """,
            note="accelerate-bf16",
        ),
        valid(
            """
            import argparse
            from dataclasses import dataclass
            from transformers import TrainingArguments

            parser = argparse.ArgumentParser()
            parser.add_argument("--no_fp16", action="store_false")
            parser.add_argument("--bf16", action="store_true", default=True)
            args = parser.parse_args()


            @dataclass
            class Options:
                fp16: bool = False
                bf16: bool = True


            first = TrainingArguments("out", fp16=not args.no_fp16, bf16=args.bf16, optim="adamw_torch_xla", dataloader_num_workers=2)
            second = TrainingArguments("out", fp16=options.fp16, bf16=options.bf16, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            note="fp16-off-by-default-beside-bf16",
        ),
        valid(
            """
            from accelerate import Accelerator
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", fp16=True, optim="adamw_torch_xla", dataloader_num_workers=2)
            accelerator = Accelerator(mixed_precision="fp16")
            """,
            target="sagemaker",
            note="sagemaker-keeps-fp16",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers as hf


            def train(model, use_amp):
                args = hf.Seq2SeqTrainingArguments("out", fp16=use_amp, bf16=False, optim="adamw_torch_xla", dataloader_num_workers=2)
                hf.Seq2SeqTrainer(model=model, args=args).train()
            """,
            """
            import transformers as hf


            def train(model, use_amp):
                args = hf.Seq2SeqTrainingArguments("out", bf16=use_amp, optim="adamw_torch_xla", dataloader_num_workers=2)
                hf.Seq2SeqTrainer(model=model, args=args).train()
            """,
            alias=True,
            findings=(Expected(5, 12, "fp16=use_amp -> bf16=use_amp"),),
        ),
        invalid(
            """
            from transformers import TrainingArguments


            def train(output_dir, bf16):
                fp16 = not bf16
                return TrainingArguments(output_dir=output_dir, fp16=fp16, bf16=bf16, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            note="fp16-and-bf16-values",
            findings=(
                Expected(
                    6,
                    53,
                    "fp16=fp16 beside bf16=bf16: fp16 mixed precision raises on a TPU (accelerate 1.15's "
                    'Accelerator, also the one the Trainer builds: "fp16 mixed precision requires a device in (...)"; '
                    "on an XLA CPU or GPU device it runs fp16 autocast with a gradient scaler, as on CUDA); bf16 is "
                    "the TPU's mixed precision: pass bf16=True where fp16 would be True, and fp16=False",
                ),
            ),
        ),
        invalid(
            """
            import argparse
            from transformers import TrainingArguments

            parser = argparse.ArgumentParser()
            parser.add_argument("--fp16", action="store_true", default=True)
            parser.add_argument("--bf16", action="store_true")
            args = parser.parse_args()
            training_args = TrainingArguments("out", fp16=args.fp16, bf16=args.bf16, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            note="fp16-flag-on-by-default-beside-bf16",
            findings=(Expected(8, 42, "fp16=args.fp16 beside bf16=args.bf16: fp16 mixed precision raises"),),
        ),
        invalid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(**config, fp16=True, optim="adamw_torch_xla", dataloader_num_workers=2)
            """,
            note="fp16-beside-unpacked-keywords",
            findings=(Expected(3, 36, "fp16=True beside keywords from `**` (they may hold bf16)"),),
        ),
        invalid(
            """
            import torch
            import accelerate

            accelerator = accelerate.Accelerator(mixed_precision='fp16', gradient_accumulation_steps=2)
            """,
            """
            import torch
            import accelerate

            accelerator = accelerate.Accelerator(mixed_precision='bf16', gradient_accumulation_steps=2)
            """,
            alias=True,
            note="accelerate-literal",
            findings=(Expected(4, 15, "mixed_precision='fp16' -> 'bf16'"),),
        ),
        invalid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator(mixed_precision=args.mixed_precision)
            """,
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator(mixed_precision="bf16" if args.mixed_precision == "fp16" else args.mixed_precision)
            """,
            note="accelerate-variable",
            findings=(Expected(4, 15, 'where `args.mixed_precision` holds "fp16"'),),
        ),
    ),
)


def _bf16_autocast(ctx: Context[Facts]) -> bool:
    """The target's XLA autocasts to bfloat16 (the sagemaker target keeps the script's precision)."""
    return ctx.target.autocast_dtype == "bfloat16"


@on_facts(BF16_MIXED_PRECISION, nodes=lambda facts: facts.huggingface.fp16_arguments)
def _training_arguments(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """``TrainingArguments(fp16=value)``: ``bf16=value`` (a bf16=False or None beside it goes),
    or an error where bf16 holds a value the tool cannot read."""
    import libcst as cst

    from codemods.engine.nodes import call_args, is_false, is_none

    if not _bf16_autocast(ctx):
        return updated
    keywords = call_args(updated)[1]
    fp16 = keywords["fp16"].value
    bf16 = keywords.get("bf16")
    beside = (
        f"bf16={ctx.code(bf16.value)}"
        if bf16 is not None and not (is_false(bf16.value) or is_none(bf16.value))
        else "keywords from `**` (they may hold bf16)"
        if bf16 is None and any(a.star == "**" for a in updated.args)
        else None
    )
    if beside is not None and original in ctx.facts.huggingface.fp16_off_by_default:
        # fp16 is off unless a flag turns it on: the run as given trains in bf16, as XLA does
        return updated
    if beside is not None:
        ctx.report(
            BF16_MIXED_PRECISION,
            call_args(original)[1]["fp16"],
            f"fp16={ctx.code(fp16)} beside {beside}: {_RAISES}: pass bf16=True where fp16 would be True, and "
            "fp16=False",
        )
        return updated
    args = [
        a.with_changes(keyword=cst.Name("bf16")) if a.keyword is not None and a.keyword.value == "fp16" else a
        for a in updated.args
        if a is not bf16
    ]
    if bf16 is not None and updated.args[-1] is bf16:
        args[-1] = args[-1].with_changes(comma=bf16.comma)
    code = ctx.code(fp16)
    return ctx.fix_or_keep(
        updated,
        BF16_MIXED_PRECISION,
        original,
        f"fp16={code} -> bf16={code}: {_RAISES}",
        lambda: updated.with_changes(args=args),
    )


@on_calls(BF16_MIXED_PRECISION, names="accelerate.Accelerator")
def _accelerator(ctx: Context[Facts], original: cst.Call, updated: cst.Call, callee: str) -> cst.Call:
    """``Accelerator(mixed_precision="fp16")``: "bf16"; a variable is mapped where it holds "fp16"."""
    import libcst as cst

    from codemods.engine.nodes import call_args, quoted_like, string_value

    if not _bf16_autocast(ctx):
        return updated
    argument = call_args(updated)[1].get("mixed_precision")
    if argument is None:
        return updated
    value = argument.value
    code = ctx.code(value)
    if string_value(value) == "fp16":
        new_value: cst.BaseExpression = quoted_like(value, "bf16")
        message = f"mixed_precision={code} -> {ctx.code(new_value)}: {_RAISES}"
    elif string_value(value) is None and type(value) in (cst.Name, cst.Attribute):
        new_value = cst.parse_expression(f'"bf16" if {code} == "fp16" else {code}')
        message = f'mixed_precision={code} -> "bf16" where `{code}` holds "fp16", {_RAISES}; any other choice is kept'
    else:
        return updated
    args = [a.with_changes(value=new_value) if a is argument else a for a in updated.args]
    return ctx.fix_or_keep(updated, BF16_MIXED_PRECISION, original, message, lambda: updated.with_changes(args=args))
