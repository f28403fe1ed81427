"""XLA8: Hugging Face Trainer scripts and Accelerate."""

from __future__ import annotations

from codemods.engine.rule import Expected, Invalid, Rule, invalid, valid

_TRAINER = """\
from transformers import Trainer, TrainingArguments


def main():
    args = TrainingArguments(output_dir="out"{args})
    Trainer(model=build_model(), args=args, train_dataset=load()).train()
{extra}

if __name__ == "__main__":
    main()
"""
_ENTRY = """

def _mp_fn(index):
    main()
"""

TRAINER_XLA_OPTIMIZER = Rule(
    code="XLA801",
    name="trainer-xla-optimizer",
    severity="error",
    summary='TrainingArguments use optim="adamw_torch_xla" (sync-free AdamW), in code or on the parsed arguments',
    fixable=True,
    why="With torch >= 2.8 the Trainer's default optimizer is fused AdamW, which raises on XLA tensors; "
    "adamw_torch_xla is the same AdamW, written for XLA (no host sync in the step).",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args="", extra=""),
            _TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY),
            findings=(Expected(5, 12, 'optim="adamw_torch_xla" added'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import Trainer, TrainingArguments, is_torch_xla_available

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla" if is_torch_xla_available() else "adamw_torch", dataloader_num_workers=2)
            trainer = Trainer(model=model, args=args)
            """,
            note="xla-aware",
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            """
            import transformers as tf

            args = tf.TrainingArguments("out", optim='adamw_torch_xla', dataloader_num_workers=2)
            trainer = tf.Trainer(model=model, args=args)
            """,
            alias=True,
            findings=(Expected(3, 8, "optim='adamw_torch' -> \"adamw_torch_xla\""),),
        ),
        invalid(
            """
            from transformers import Trainer, TrainingArguments


            def main():
                args = TrainingArguments(
                    output_dir="out",
                    per_device_train_batch_size=8,
                    dataloader_num_workers=4,
                )
                trainer = Trainer(model=model, args=args, train_dataset=train_set)
                trainer.train()


            if __name__ == "__main__":
                main()
            """,
            """
            from transformers import Trainer, TrainingArguments


            def main():
                args = TrainingArguments(
                    output_dir="out",
                    per_device_train_batch_size=8,
                    dataloader_num_workers=4,
                    optim="adamw_torch_xla",
                )
                trainer = Trainer(model=model, args=args, train_dataset=train_set)
                trainer.train()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                main()
            """,
            note="code",
            findings=(Expected(5, 12, 'optim="adamw_torch_xla" added'),),
        ),
        invalid(
            """
            import sys

            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
                if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                    model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
                else:
                    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
                trainer = Seq2SeqTrainer(model=model, args=training_args)
                trainer.train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()
            """,
            """
            import sys

            from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


            def main():
                parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))
                if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
                    model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
                else:
                    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
                if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
                    training_args.optim = "adamw_torch_xla"
                trainer = Seq2SeqTrainer(model=model, args=training_args)
                trainer.train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()
            """,
            note="parser",
            findings=(
                Expected(12, 5, 'training_args.optim = "adamw_torch_xla" after parsing, when it holds a torch AdamW'),
            ),
        ),
        *(
            invalid(
                """
                from dataclasses import dataclass

                from transformers import HfArgumentParser, Trainer, TrainingArguments


                @dataclass
                class ScriptArguments:
                    optimizer: str = "adamw"


                def _mp_fn(index):
                    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
                    script_args, training_args = parser.parse_args_into_dataclasses()
                    Trainer(model=model, args=training_args).train()
                """,
                """
                from dataclasses import dataclass

                from transformers import HfArgumentParser, Trainer, TrainingArguments


                @dataclass
                class ScriptArguments:
                    optimizer: str = "adamw"


                def _mp_fn(index):
                    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
                    script_args, training_args = parser.parse_args_into_dataclasses()
                    if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
                        training_args.optim = "adamw_torch_xla"
                    Trainer(model=model, args=training_args).train()
                """,
                target=target,
                note=f"script-dataclass-default-kept-{target}",
                findings=(Expected(14, 5, "a dataclass's or the command line's value, which are left as they are"),),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)

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

MP_FN_ENTRY_POINT = Rule(
    code="XLA803",
    name="mp-fn-entry-point",
    severity="info",
    summary="`def _mp_fn(index): main()` is added: SageMaker's pytorchxla launcher and torch_xla.launch call it",
    fixable=True,
    changes_start="entry point",
    why="Distributed XLA launchers start each process by calling `_mp_fn(index)` in the script; "
    "one-device runs never call it.",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=""),
            _TRAINER.format(args=', optim="adamw_torch_xla", dataloader_num_workers=4', extra=_ENTRY),
            findings=(Expected(9, 1, "`def _mp_fn(index)"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import Trainer


            def main():
                Trainer(model=model, args=training_args).train()


            def _mp_fn(index):
                # For xla_spawn (TPUs)
                main()


            if __name__ == "__main__":
                main()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from transformers import Seq2SeqTrainer as S2S


            def main():
                S2S(model=model, args=training_args).train()
            """,
            """
            from transformers import Seq2SeqTrainer as S2S


            def main():
                S2S(model=model, args=training_args).train()


            def _mp_fn(index):
                main()
            """,
            alias=True,
            findings=(Expected(8, 1, "`def _mp_fn(index)"),),
        ),
        invalid(
            """
            from transformers import Trainer


            def main(config="config.json"):
                Trainer(model=build(config), args=training_args).train()


            if __name__ == "__main__":
                main()
            """,
            """
            from transformers import Trainer


            def main(config="config.json"):
                Trainer(model=build(config), args=training_args).train()


            def _mp_fn(index):
                main()


            if __name__ == "__main__":
                main()
            """,
            findings=(Expected(8, 1, "`def _mp_fn(index)"),),
        ),
    ),
)

STATIC_PADDING = Rule(
    code="XLA804",
    name="static-padding",
    severity="warning",
    summary="Tokenizer calls and collators that pad to the longest sequence pad to max_length instead",
    fixable=True,
    why='`padding=True` or `"longest"` gives each batch its own sequence length, and every new shape '
    'compiles a new graph; `padding="max_length"` with a fixed max_length gives one shape.',
    examples=lambda: (
        Invalid(
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            "batch = tokenizer(texts, padding=True, truncation=True, max_length=128)\n",
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            'batch = tokenizer(texts, padding="max_length", truncation=True, max_length=128)\n',
            findings=(Expected(4, 34, 'padding=True -> "max_length"'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
            collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=64)
            other = {"padding": True}
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import transformers

            tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
            batch = tok.batch_encode_plus(texts, padding=True, truncation=True, max_length=16)
            collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
            """,
            """
            import transformers

            tok = transformers.BertTokenizerFast.from_pretrained("bert-base-uncased")
            batch = tok.batch_encode_plus(texts, padding="max_length", truncation=True, max_length=16)
            collate = transformers.DataCollatorForSeq2Seq(tok, padding="longest")
            """,
            alias=True,
            findings=(
                Expected(4, 46, 'padding=True -> "max_length"'),
                Expected(5, 11, 'padding="longest" pads each batch to its longest sequence, a new shape to'),
            ),
        ),
        invalid(
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding=True, truncation=True, max_length=64)
            enc2 = tokenizer(texts, padding="longest", max_length=64, return_tensors="pt")
            enc3 = tokenizer(texts, padding=True)
            collator = DataCollatorWithPadding(tokenizer)


            def preprocess(batch, tokenizer):
                return tokenizer(batch["text"], padding='longest', truncation=True, max_length=32)
            """,
            """
            from transformers import AutoTokenizer, DataCollatorWithPadding

            tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64)
            enc2 = tokenizer(texts, padding="max_length", max_length=64, return_tensors="pt")
            enc3 = tokenizer(texts, padding=True)
            collator = DataCollatorWithPadding(tokenizer)


            def preprocess(batch, tokenizer):
                return tokenizer(batch["text"], padding='max_length', truncation=True, max_length=32)
            """,
            findings=(
                Expected(4, 32, 'padding=True -> "max_length"'),
                Expected(5, 33, 'padding="longest" -> "max_length"'),
                Expected(
                    6, 8, "padding=True pads each batch to its longest sequence, a new shape to compile each time"
                ),
                Expected(7, 12, "the collator's default padding pads each batch to its longest sequence, a new"),
                Expected(11, 45, "padding='longest' -> 'max_length'"),
            ),
        ),
    ),
)

PADDING_LENGTH = Rule(
    code="XLA805",
    name="padding-length",
    severity="warning",
    summary='padding="max_length" without max_length or truncation=True: lengths are not fixed',
    fixable=False,
    why="Without max_length the tokenizer pads to its model_max_length (may be huge or unset); without "
    "truncation longer texts keep their own length, each a new shape to compile.",
    examples=lambda: (
        Invalid(
            'from transformers import AutoTokenizer\n\ntokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
            'batch = tokenizer(texts, padding="max_length")\n',
            findings=(Expected(4, 9, 'padding="max_length" without max_length= and truncation=True'),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained("gpt2")
            a = tok(texts, padding="max_length", truncation=True, max_length=32)
            b = tok(texts)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from transformers import AutoTokenizer as AT


            def encode(texts, tokenizer):
                return tokenizer(texts, padding='max_length', max_length=128)
            """,
            alias=True,
            findings=(Expected(5, 12, 'padding="max_length" without truncation=True'),),
        ),
        invalid(
            """
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained("gpt2")
            a = tok(texts, padding="max_length")
            b = tok(texts, padding="max_length", max_length=32)
            """,
            findings=(
                Expected(4, 5, 'padding="max_length" without max_length= and truncation=True'),
                Expected(5, 5, 'padding="max_length" without truncation=True'),
            ),
        ),
    ),
)

INPUT_WORKERS = Rule(
    code="XLA806",
    name="input-workers",
    severity="warning",
    summary="dataloader_num_workers / preprocessing_num_workers left at their defaults",
    fixable=False,
    why="With no workers, batches are prepared in the training process between steps and the device waits; "
    "use at least as many workers as devices per host, and fewer than the host's CPUs.",
    examples=lambda: (
        Invalid(
            _TRAINER.format(args=', optim="adamw_torch_xla"', extra=_ENTRY),
            findings=(Expected(5, 12, "dataloader_num_workers is left at 0"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla", dataloader_num_workers=4)
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            from dataclasses import dataclass, field
            from typing import Optional

            import transformers


            @dataclass
            class DataTrainingArguments:
                preprocessing_num_workers: Optional[int] = field(default=None, metadata={"help": "processes for preprocessing"})


            parser = transformers.HfArgumentParser((DataTrainingArguments, transformers.TrainingArguments))
            data_args, training_args = parser.parse_args_into_dataclasses()
            training_args.optim = "adamw_torch_xla"
            """,
            alias=True,
            findings=(Expected(9, 5, "preprocessing_num_workers defaults to None"),),
        ),
        invalid(
            """
            from transformers import TrainingArguments

            args = TrainingArguments(output_dir="out", optim="adamw_torch_xla")
            """,
            findings=(Expected(3, 8, "dataloader_num_workers is left at 0"),),
        ),
    ),
)

ACCELERATE_LOOP = Rule(
    code="XLA807",
    name="accelerate-loop",
    severity="info",
    summary="An Accelerate training loop: Accelerate already does the XLA work, nothing to port",
    fixable=False,
    why="On XLA, Accelerate places the model and batches, wraps prepared loaders in MpDeviceLoader (which "
    "ends each step) and steps optimizers with xm.optimizer_step; launch it with an XLA accelerate config.",
    examples=lambda: (
        Invalid(
            "import torch\nfrom accelerate import Accelerator\n\naccelerator = Accelerator()\n"
            "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\nfor batch in loader:\n"
            "    loss = model(**batch).loss\n    accelerator.backward(loss)\n    optimizer.step()\n    optimizer.zero_grad()\n",
            findings=(Expected(8, 5, "Accelerate loop"),),
        ),
    ),
    valid=lambda: (
        valid(
            """
            import torch
            import torch_xla
            import torch_xla.core.xla_model as xm

            for batch in loader:
                loss = model(batch.to(device)).mean()
                loss.backward()
                xm.optimizer_step(optimizer)
                torch_xla.sync()
            """,
        ),
    ),
    invalid=lambda: (
        invalid(
            """
            import torch
            import accelerate

            acc = accelerate.Accelerator(mixed_precision="no")
            model, opt, dl = acc.prepare(model, opt, dl)
            for batch in dl:
                acc.backward(model(batch).sum())
                opt.step()
            """,
            alias=True,
            findings=(Expected(7, 5, "Accelerate loop"),),
        ),
        *(
            invalid(
                """
                import torch
                from accelerate import Accelerator

                accelerator = Accelerator(log_with="all") if with_tracking else Accelerator()
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    accelerator.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
                """,
                target=target,
                note=f"accelerator-chosen-by-a-condition-{target}",
                findings=(Expected(8, 5, "Accelerate loop"),),
            )
            for target in ("2.9", "sagemaker")
        ),
        invalid(
            """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            for step, batch in enumerate(loader):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
                print(f"step {step} loss {loss.item()}")
            """,
            findings=(Expected(8, 5, "Accelerate loop"),),
        ),
        *(
            invalid(
                """
                import torch
                from accelerate import Accelerator

                accelerator = Accelerator(log_with="all") if with_tracking else Accelerator()
                model = torch.nn.Linear(4, 1)
                optimizer = torch.optim.AdamW(model.parameters())
                model, optimizer, loader = accelerator.prepare(model, optimizer, make_loader())
                for step, (x, y) in enumerate(loader):
                    x, y = x.to(accelerator.device), y.to(accelerator.device)
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    accelerator.backward(loss)
                    optimizer.step()
                    optimizer.zero_grad()
                for x, y in loader:
                    accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
                    optimizer.step()
                """,
                target=target,
                note=f"accelerator-of-a-conditional-expression-{target}",
                findings=(Expected(11, 5, "Accelerate loop"), Expected(15, 5, "Accelerate loop")),
            )
            for target in ("2.9", "sagemaker")
        ),
    ),
)

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
    "`LOCAL_RANK` is reported here, the environment read is left as written (XLA609 reports it).",
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
    ),
)

RULES = (
    TRAINER_XLA_OPTIMIZER,
    TRAINER_ONE_DEVICE,
    MP_FN_ENTRY_POINT,
    STATIC_PADDING,
    PADDING_LENGTH,
    INPUT_WORKERS,
    ACCELERATE_LOOP,
    MODEL_PLACEMENT,
)
