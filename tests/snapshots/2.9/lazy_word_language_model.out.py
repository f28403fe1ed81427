"""Word-level language model in the style of pytorch/examples word_language_model.

The corpus is batchified once and moved to the device whole; every step takes
``source[i:i+bptt]`` at the loop's offset, the hidden state is carried across
batches, and evaluation reads each batch's loss with ``.item()``.  A random token
stream stands in for the Wikitext corpus.
"""
import math

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(1111)
device = torch_xla.device()

bptt = 8
batch_size = 10
eval_batch_size = 5
ntokens = 50
log_interval = 5
clip = 0.25


def make_tokens(n):
    """A token stream with some structure: each token tends to follow its predecessor."""
    tokens = torch.zeros(n, dtype=torch.long)
    for i in range(1, n):
        tokens[i] = (tokens[i - 1] + torch.randint(1, 4, ())) % ntokens
    return tokens


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data


train_data = batchify(make_tokens(1000), batch_size)
val_data = batchify(make_tokens(200), eval_batch_size)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, self.nhid), weight.new_zeros(1, bsz, self.nhid))


model = RNNModel(ntokens, 16, 32).to(device)
criterion = nn.NLLLoss()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len].to(device)
    target = source[i+1:i+1+seq_len].to(device).view(-1)
    return data, target


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
            torch_xla.sync()
    return total_loss / (len(data_source) - 1)


step = 0


def train(lr):
    global step
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
        step += 1
        if batch % log_interval == 0 and batch > 0:
            cur_loss = total_loss / log_interval
            print('| {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
                batch, len(train_data) // bptt, lr, cur_loss, math.exp(cur_loss)))
            total_loss = 0
        torch_xla.sync()


lr = 2.0
best_val_loss = None
for epoch in range(1, 3):
    train(lr)
    val_loss = evaluate(val_data)
    print(f"epoch {epoch} valid loss {val_loss:.6f}")
    if not best_val_loss or val_loss < best_val_loss:
        best_val_loss = val_loss
    else:
        lr /= 4.0
