"""
nanoGPT's train.py in miniature, with its mixed precision as written: a bfloat16/float16
choice made at run time, the autocast context picked from the device type, a GradScaler
only enabled for float16, gradient accumulation, and the optimizer built by the model's
configure_optimizers (fused AdamW where available).
"""
import inspect
import os
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.nn import functional as F
import torch_xla
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm

# -----------------------------------------------------------------------------
out_dir = 'out-amp'
gradient_accumulation_steps = 2
batch_size = 8
block_size = 16
vocab_size = 64
n_embd = 32
learning_rate = 2e-3
max_iters = 12
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.95
grad_clip = 1.0
device = 'xla'  # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc., or try 'mps' on macbooks
dtype = 'bfloat16'
# -----------------------------------------------------------------------------

os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
device_type = 'xla' if 'xla' in device else 'cpu'  # for later use in torch.autocast
# note: float16 data type will automatically use a GradScaler
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

data = torch.randint(vocab_size, (4000,), dtype=torch.long)


def get_batch(step):
    g = torch.Generator().manual_seed(step)
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=g)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        x = x + self.mlp(x)
        logits = self.lm_head(self.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.view(-1))

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [{'params': decay, 'weight_decay': weight_decay}, {'params': no_decay, 'weight_decay': 0.0}]
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        return syncfree.AdamW(groups, lr=learning_rate, betas=betas, **extra_args)


model = TinyLM()
model.to(device)
# initialize a GradScaler. If enabled=False scaler is a no-op
scaler = torch.amp.GradScaler("xla", enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)

iter_num = 0
X, Y = get_batch(0)
while True:
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch(iter_num * gradient_accumulation_steps + micro_step + 1)
        scaler.scale(loss).backward()
        torch_xla.sync()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    lossf = loss.item() * gradient_accumulation_steps
    print(f"step {iter_num} loss {lossf:.6e}")
    iter_num += 1
    if iter_num >= max_iters:
        break
    torch_xla.sync()

xm.save({'model': model.state_dict(), 'iter_num': iter_num}, os.path.join(out_dir, 'ckpt.pt'))
