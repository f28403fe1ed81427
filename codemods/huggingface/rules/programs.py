"""Programs and helpers the huggingface rules' cases share."""

from __future__ import annotations

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
