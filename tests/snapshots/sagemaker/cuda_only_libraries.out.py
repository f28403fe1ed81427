"""
A fine-tuning script of the kind found in LLM repositories: flash-attn attention, a
bitsandbytes 8-bit optimizer or a fused AdamW, NCCL settings and CUDA event timing.
"""
import os
import time

import bitsandbytes as bnb
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm
from flash_attn import flash_attn_func

os.environ["NCCL_DEBUG"] = "WARN"
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
use_8bit_adam = False


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2)
        y = flash_attn_func(q, k, v, causal=True)
        return self.out(y.reshape(B, T, C))


device = xm.xla_device()
model = Attention(64, 4).to(device)
if use_8bit_adam:
    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)
else:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for step in range(20):
    start.record()
    x = torch.randn(2, 128, 64, device=device)
    loss = model(x).pow(2).mean()
    loss.backward()
    xm.optimizer_step(optimizer)
    optimizer.zero_grad()
    end.record()
    xm.wait_device_ops()
    xm.add_step_closure(lambda step, loss, value: print(f"step {step} loss {loss.item():.4f} time {value:.1f} ms"), args=(step, loss, start.elapsed_time(end)))
    xm.mark_step()
