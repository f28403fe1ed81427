"""A small word-level language model in the style of pytorch/examples (word_language_model).

The corpus is made here (a random walk over a small vocabulary).  This is word_lm.py as
`xla-codemod convert` writes it, then fixed after `xla-codemod doctor` named the slicing
lines: the batchified corpus stays on the host and each step moves its slice to the device.
"""

import argparse
import math

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser(description="word-level language model")
parser.add_argument("--lr", type=float, default=2.0)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--bptt", type=int, default=6)
parser.add_argument("--log-interval", type=int, default=10)
args = parser.parse_args()

torch.manual_seed(1111)
torch_xla.manual_seed(1111)
device = torch_xla.device()

NTOKENS = 50


def make_corpus(length):
    """Token ids of a random walk: each word is followed by one of a few likely successors."""
    steps = torch.randint(-2, 3, (length,))
    return torch.remainder(torch.cumsum(steps, 0), NTOKENS)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()  # stays on the host: see get_batch


train_data = batchify(make_corpus(4 * (30 * 6 + 1)), args.batch_size)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.RNN(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output).view(-1, self.decoder.out_features), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return weight.new_zeros(1, bsz, self.nhid)


def repackage_hidden(h):
    """Detach hidden states from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i + seq_len].to(device)  # slice on the host, then move the slice
    target = source[i + 1:i + 1 + seq_len].view(-1).to(device)
    return data, target


model = RNNModel(NTOKENS, 16, 32).to(device)
criterion = nn.CrossEntropyLoss()


def train(epoch):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-args.lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            print(f"epoch {epoch} batch {batch} loss {cur_loss:.3f} ppl {math.exp(cur_loss):.1f}")
            total_loss = 0.0
        torch_xla.sync()


for epoch in range(1, args.epochs + 1):
    train(epoch)
xm.save(model.state_dict(), "model.pt")
