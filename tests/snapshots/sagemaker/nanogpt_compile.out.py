"""
nanoGPT-style training with torch.compile on by default (`compile = True`, as
nanoGPT, llama2.c and modded-nanogpt have it): a tiny causal transformer block
over a random token stream, one process, no AMP.
"""
import math
import sys
import time
from ast import literal_eval

import torch
import torch.nn as nn
from torch.nn import functional as F
import torch_xla.core.xla_model as xm

# -----------------------------------------------------------------------------
# default config values
batch_size = 4
block_size = 16
vocab_size = 64
n_embd = 32
n_head = 2
learning_rate = 1e-3
max_iters = 12
weight_decay = 1e-1
grad_clip = 1.0
device = 'xla'
compile = True  # use PyTorch 2.0 to compile the model to be faster
seed = 1337
# -----------------------------------------------------------------------------
for arg in sys.argv[1:]:  # poor man's configurator: --compile=False
    key, value = arg[2:].split('=')
    globals()[key] = literal_eval(value)

torch.manual_seed(seed)
data = torch.randint(vocab_size, (2000,), dtype=torch.long)


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.block = Block()
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        for name, p in self.named_parameters():
            if name.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2))

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.block(self.wte(idx) + self.wpe(pos))
        logits = self.lm_head(self.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


model = GPT()
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)

# compile the model
if compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model

X, Y = get_batch()  # fetch the very first batch
t0 = time.time()
for iter_num in range(max_iters):
    logits, loss = model(X, Y)
    X, Y = get_batch()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    xm.optimizer_step(optimizer)
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    xm.add_step_closure(lambda iter_num, loss: print(f"step {iter_num} loss {loss.item():.6e}"), args=(iter_num, loss))
    xm.mark_step()
