"""A tiny character model and the function that builds its optimizer (weight decay on
the matrices only), kept apart from the training code, as minGPT-style projects do."""
import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx, targets):
        logits = self.head(torch.tanh(self.mix(self.embed(idx))))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def create_optimizer(model, lr, weight_decay):
    decay = [p for name, p in model.named_parameters() if name.endswith("weight") and p.dim() == 2]
    no_decay = [p for name, p in model.named_parameters() if not (name.endswith("weight") and p.dim() == 2)]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))
