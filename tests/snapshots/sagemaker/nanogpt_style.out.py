"""
A much simplified version of nanoGPT's train.py: single process, no AMP,
no DDP, no torch.compile, and a tiny MLP language model over a random
token stream instead of a GPT on a real dataset.
"""
import os
import time

import torch
import torch.nn as nn
from torch.nn import functional as F
import torch_xla.core.xla_model as xm

# -----------------------------------------------------------------------------
# default config values
out_dir = 'out'
eval_interval = 10
log_interval = 1
eval_iters = 5
always_save_checkpoint = True
# data
batch_size = 8
block_size = 16
vocab_size = 64
# model
n_embd = 32
# adamw optimizer
learning_rate = 1e-3
max_iters = 20
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
# system
device = 'xla'
seed = 1337
# -----------------------------------------------------------------------------

os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed)
device_type = 'cuda' if 'cuda' in device else 'cpu'  # for later use in torch.autocast

# poor man's data loader: a random token stream split 90/10
data = torch.randint(vocab_size, (4000,), dtype=torch.long)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]


def get_batch(split):
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    if device_type == 'cuda':
        # pin arrays x,y, which allows us to move them to GPU asynchronously (non_blocking=True)
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


class TinyLM(nn.Module):
    """Embedding -> MLP -> vocab logits, applied position-wise (bigram-ish)."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        x = x + self.mlp(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


model = TinyLM()
model.to(device)
model_args = dict(n_embd=n_embd, block_size=block_size, vocab_size=vocab_size)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate,
                              betas=(beta1, beta2), weight_decay=weight_decay)


# helps estimate an arbitrarily accurate loss over either split using many batches
@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


# training loop
iter_num = 0
best_val_loss = 1e9
X, Y = get_batch('train')  # fetch the very first batch
t0 = time.time()
while True:
    # evaluate the loss on train/val sets and write checkpoints
    if iter_num % eval_interval == 0:
        losses = estimate_loss()
        print(f"eval at iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
            if iter_num > 0:
                checkpoint = {
                    'model': model.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'model_args': model_args,
                    'iter_num': iter_num,
                    'best_val_loss': best_val_loss,
                }
                print(f"saving checkpoint to {out_dir}")
                xm.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))

    logits, loss = model(X, Y)
    # immediately async prefetch next batch while model is doing the forward pass on the GPU
    X, Y = get_batch('train')
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip != 0.0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    xm.optimizer_step(optimizer)

    # timing and logging
    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    if iter_num % log_interval == 0:
        lossf = loss.item()
        print(f"step {iter_num} loss {lossf:.6e}")
    iter_num += 1

    # termination conditions
    if iter_num > max_iters:
        break
    xm.mark_step()
