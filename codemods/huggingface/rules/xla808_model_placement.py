"""XLA808 model-placement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods.engine.hooks import on_facts
from codemods.engine.rule import Expected, Rule, invalid, valid

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.facts import Facts


MODEL_PLACEMENT = Rule(
    code="XLA808",
    name="model-placement",
    severity="error",
    summary="from_pretrained(...) places the model off XLA: device_map (CUDA, or accelerate's choice) or bitsandbytes",
    fixable=False,
    why='A device_map of a number or "cuda" loads the weights onto a CUDA device (transformers reads an int as '
    'a CUDA ordinal and "cuda" as cuda:LOCAL_RANK): without CUDA that raises. "auto" and the other '
    "strategies leave the choice to accelerate, which knows CUDA-like devices, the CPU and the disk, never "
    "XLA: the model stays on the host (offloaded layers keep hooks that move them). load_in_8bit, "
    "load_in_4bit and a BitsAndBytesConfig quantize with bitsandbytes, which has no XLA kernels. Load the "
    "model without them; the Trainer (or `.to(device)`) moves it to the XLA device. A device_map read from "
    "`LOCAL_RANK` is reported here, the environment read is left as written (XLA609 reports it). The same keys "
    "in a dict the call unpacks (`**model_kwargs`, with `model_kwargs = {'device_map': 'balanced'} if ... else {}` "
    "or `dict(device_map=...)` assigned in the function or the file) are reported at the `**`: without CUDA, "
    "accelerate's `get_max_memory` offers only the CPU, so 'balanced' loads the whole model there.",
    examples=lambda: (
        invalid(
            """
            from transformers import AutoModelForCausalLM

            model = AutoModelForCausalLM.from_pretrained("gpt2", device_map="auto")
            """,
            findings=(Expected(3, 54, '`device_map="auto"`: accelerate places the model on CUDA devices'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoModelForCausalLM, AutoTokenizer

            model = AutoModelForCausalLM.from_pretrained("gpt2", device_map="cpu", load_in_8bit=False)
            tokenizer = AutoTokenizer.from_pretrained("gpt2")
            """,
        ),
        valid(
            """
            from transformers import AutoModelForCausalLM

            device_map = None
            model = AutoModelForCausalLM.from_pretrained("gpt2", device_map=device_map)
            """,
            note="no-device-map",
        ),
        valid(
            """
            import torch
            from transformers import AutoModelForCausalLM
            def load(name, multi):
                model_kwargs = {"torch_dtype": torch.bfloat16, "device_map": None} if multi else {}
                kw = dict(low_cpu_mem_usage=True)
                return AutoModelForCausalLM.from_pretrained(name, **model_kwargs), AutoModelForCausalLM.from_pretrained(name, **kw)
            """,
            target="sagemaker",
            note="unpacked-dicts-that-place-nothing",
        ),
    ),
    invalid=lambda: (
        # tloen/alpaca-lora finetune.py: one process per GPU, each loading onto its LOCAL_RANK.
        invalid(
            """
            import os

            import torch
            from transformers import LlamaForCausalLM


            def train(base_model, ddp):
                device_map = "auto"
                if ddp:
                    device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
                return LlamaForCausalLM.from_pretrained(
                    base_model, load_in_8bit=True, torch_dtype=torch.float16, device_map=device_map
                )
            """,
            findings=(
                Expected(12, 21, "`load_in_8bit=True` quantizes with bitsandbytes"),
                Expected(
                    12,
                    67,
                    '`device_map=device_map` ("auto" or {"": int(os.environ.get("LOCAL_RANK") or 0)}) '
                    "loads the model onto a CUDA device",
                ),
            ),
        ),
        invalid(
            """
            import transformers as hf

            config = hf.BitsAndBytesConfig(load_in_4bit=True)
            model = hf.AutoModel.from_pretrained("bert-base-uncased", quantization_config=config, device_map=0)
            """,
            alias=True,
            findings=(
                Expected(4, 59, "`quantization_config=config` quantizes with bitsandbytes"),
                Expected(4, 87, "`device_map=0` loads the model onto a CUDA device"),
            ),
        ),
        invalid(
            """
            from transformers import AutoModel

            model = AutoModel.from_pretrained(args.model, device_map=args.device_map)
            """,
            note="device-map-not-seen",
            findings=(Expected(3, 47, "`device_map=args.device_map`: accelerate places the model on CUDA devices"),),
        ),
        # eric-mitchell/direct-preference-optimization train.py: BasicTrainer relied on accelerate's GPUs.
        invalid(
            """
            import transformers
            def main(config):
                model_kwargs = {'device_map': 'balanced'} if config.trainer == 'BasicTrainer' else {}
                policy = transformers.AutoModelForCausalLM.from_pretrained(config.name, low_cpu_mem_usage=True, **model_kwargs)
                return policy
            """,
            note="device-map-in-an-unpacked-conditional-dict",
            findings=(
                Expected(
                    4,
                    101,
                    "`**model_kwargs` (`device_map='balanced'`): accelerate places the model on CUDA devices, else "
                    "the CPU and the disk, never on XLA: drop the `device_map` key of `model_kwargs`",
                ),
            ),
        ),
        invalid(
            """
            import transformers as hf
            kw = dict(device_map=0, load_in_8bit=True)
            model = hf.AutoModel.from_pretrained("bert-base-uncased", **kw)
            """,
            target="sagemaker",
            alias=True,
            note="device-map-and-quantization-in-dict-call",
            findings=(
                Expected(3, 59, "`**kw` (`device_map=0`) loads the model onto a CUDA device"),
                Expected(3, 59, "`**kw` (`load_in_8bit=True`) quantizes with bitsandbytes"),
            ),
        ),
    ),
)


@on_facts(MODEL_PLACEMENT, nodes=lambda facts: facts.huggingface.model_placements)
def _report(ctx: Context[Facts], original: cst.Call, updated: cst.Call) -> cst.Call:
    """Each argument of a ``from_pretrained(...)`` call that places the model off XLA."""
    for placement in ctx.facts.huggingface.model_placements[original]:
        argument = placement.argument
        if placement.value is not None:  # a key of the dict ``**model_kwargs`` unpacks
            written = f"`{ctx.code(argument)}` (`{placement.key}={_short(ctx.code(placement.value))}`"
            written += "".join(f" or {_short(ctx.code(value))}" for value in placement.values) + ")"
        else:
            written = f"`{argument.keyword.value if argument.keyword else ''}={ctx.code(argument.value)}`"
        if placement.values and placement.value is None:
            written += " (" + " or ".join(_short(ctx.code(value)) for value in placement.values) + ")"
        move = "the Trainer (or `.to(device)`) moves the model to the XLA device"
        drop = (
            "drop device_map"
            if placement.value is None
            else f"drop the `device_map` key of `{ctx.code(argument.value)}`"
        )
        if placement.kind == "quantized":
            message = (
                f"{written} quantizes with bitsandbytes, which has no XLA kernels: load the model unquantized "
                f"(torch_dtype=torch.bfloat16 halves its memory on XLA); {move}"
            )
        elif placement.kind == "cuda":
            message = (
                f"{written} loads the model onto a CUDA device (a number is a CUDA ordinal), which raises "
                f"without CUDA: {drop}, {move}"
            )
        else:
            message = (
                f"{written}: accelerate places the model on CUDA devices, else the CPU and the disk, never on "
                f"XLA: {drop}, {move}"
            )
        ctx.report(MODEL_PLACEMENT, argument, message)
    return updated


def _short(code: str, limit: int = 60) -> str:
    return code if len(code) <= limit else code[: limit - 3] + "..."
