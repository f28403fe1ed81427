"""A Trainer script in the style of the Hugging Face examples: model and data options
in dataclasses, parsed with the TrainingArguments by HfArgumentParser (from a JSON
file or the command line).  A tiny GPT-2 is built from a config; the data is a
synthetic token stream."""
import sys
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import GPT2Config, GPT2LMHeadModel, HfArgumentParser, Trainer, TrainerCallback, TrainingArguments

DEFAULT_ARGS = [
    "--output_dir", "clm_out", "--per_device_train_batch_size", "4", "--max_steps", "16", "--learning_rate", "2e-3",
    "--logging_steps", "1", "--save_strategy", "no", "--report_to", "none", "--disable_tqdm", "true", "--seed", "0",
]


@dataclass
class ModelArguments:
    n_layer: int = field(default=2, metadata={"help": "Transformer blocks."})
    n_embd: int = field(default=32, metadata={"help": "Hidden size."})


@dataclass
class DataTrainingArguments:
    block_size: int = field(default=16, metadata={"help": "Tokens per example."})
    preprocessing_num_workers: Optional[int] = field(
        default=None, metadata={"help": "The number of processes to use for the preprocessing."}
    )


class PrintLoss(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            print(f"step {state.global_step} loss {logs['loss']:.6f}")


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses(args=sys.argv[1:] or DEFAULT_ARGS)
    if training_args.optim in ("adamw_torch", "adamw_torch_fused", "adamw_hf"):
        training_args.optim = "adamw_torch_xla"

    torch.manual_seed(training_args.seed)
    config = GPT2Config(vocab_size=48, n_positions=data_args.block_size, n_embd=model_args.n_embd,
                        n_layer=model_args.n_layer, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config)

    generator = torch.Generator().manual_seed(2)
    stream = torch.cumsum(torch.randint(1, 3, (64 * data_args.block_size,), generator=generator), 0) % 48
    blocks = stream.view(-1, data_args.block_size)
    train_dataset = [{"input_ids": block, "labels": block} for block in blocks]

    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset, callbacks=[PrintLoss()])
    trainer.train()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    main()
