"""Sentence classification with a word-level tokenizer built in the script (no
download), in the padding styles found in real scripts: fixed (max_length), dynamic
(True, "longest") with and without a max_length, and a padding collator."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import DataCollatorWithPadding, PreTrainedTokenizerFast

WORDS = "the a cat dog sat ran on under mat log fast slow big small red blue".split()
vocab = {"[PAD]": 0, "[UNK]": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
backend.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")

torch.manual_seed(4)
device = torch_xla.device()


def sentence(generator):
    n = int(torch.randint(3, 12, (), generator=generator))
    return " ".join(WORDS[int(i)] for i in torch.randint(0, len(WORDS), (n,), generator=generator))


generator = torch.Generator().manual_seed(6)
texts = [sentence(generator) for _ in range(96)]
labels = torch.tensor([("cat" in t) for t in texts], dtype=torch.long)


def encode_batch(batch_texts):
    """Pads each batch to its longest sentence, cut at 16 tokens."""
    return tokenizer(batch_texts, padding="max_length", truncation=True, max_length=16, return_tensors="pt")


def encode_for_export(batch_texts):
    return tokenizer(batch_texts, padding="longest", return_tensors="pt")


def encode_fixed(batch_texts):
    return tokenizer(batch_texts, padding="max_length", max_length=16, return_tensors="pt")


collator = DataCollatorWithPadding(tokenizer)

model = nn.Sequential(nn.EmbeddingBag(len(vocab), 16, mode="mean", padding_idx=0), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

step = 0
for epoch in range(2):
    for start in range(0, len(texts), 16):
        encoded = encode_batch(texts[start:start + 16])
        ids = encoded["input_ids"].to(device)
        target = labels[start:start + 16].to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(ids), target)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
        step += 1
        torch_xla.sync()
