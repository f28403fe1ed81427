"""Fine-tunes a tiny BERT classifier with the Hugging Face Trainer, its
TrainingArguments written in the script.  The model is built from a small config
(no download) and the data is synthetic."""
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments


class PrintLoss(TrainerCallback):
    """Prints the loss the Trainer logs at every step."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            print(f"step {state.global_step} loss {logs['loss']:.6f}")


class Synthetic(torch.utils.data.Dataset):
    """Token sequences labelled by whether their first token is in the upper half."""

    def __init__(self, n, length=16, vocab=64):
        generator = torch.Generator().manual_seed(1)
        self.ids = torch.randint(1, vocab, (n, length), generator=generator)
        self.labels = (self.ids[:, 0] >= vocab // 2).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.labels[i]}


def main():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=32, num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )
    model = BertForSequenceClassification(config)
    training_args = TrainingArguments(
        output_dir="trainer_out",
        per_device_train_batch_size=8,
        max_steps=16,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        seed=0,
        optim="adamw_torch_xla",
    )
    trainer = Trainer(model=model, args=training_args, train_dataset=Synthetic(128), callbacks=[PrintLoss()])
    trainer.train()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    main()
