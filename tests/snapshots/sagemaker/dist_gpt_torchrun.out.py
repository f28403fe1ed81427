"""
Reduced from nanoGPT's train.py: runs in one process, or with DDP under torchrun

    torchrun --standalone --nproc_per_node=8 dist_gpt_torchrun.py

The whole script runs at module level; whether it is a DDP run is read from the
environment (RANK), each process picks the GPU of its LOCAL_RANK as a device
*string*, and --device=... on the command line overrides the default device.
A tiny MLP language model over a random token stream stands in for GPT.
"""
import os
import sys

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

# -----------------------------------------------------------------------------
# default config values
out_dir = 'out'
gradient_accumulation_steps = 2
batch_size = 8
block_size = 16
vocab_size = 64
n_embd = 32
learning_rate = 1e-3
max_iters = 16
# DDP settings
backend = 'xla'  # 'nccl', 'gloo', etc.
# system
device = 'xla'  # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1' etc.
# -----------------------------------------------------------------------------
# poor man's configurator: --key=value overrides the defaults above
for arg in sys.argv[1:]:
    key, value = arg[2:].split('=')
    globals()[key] = type(globals()[key])(value)
# -----------------------------------------------------------------------------

# various inits, derived attributes, I/O setup
ddp = int(os.environ.get('RANK', -1)) != -1  # is this a ddp run?
if ddp:
    init_process_group(backend=backend, init_method="xla://")
    ddp_rank = xm.get_ordinal()
    ddp_local_rank = xm.get_local_ordinal()
    ddp_world_size = xm.xrt_world_size()
    device = 'xla' if torch.cuda.is_available() else device
    master_process = ddp_rank == 0  # this process will do logging, checkpointing etc.
    seed_offset = ddp_rank  # each process gets a different seed
    # world_size number of processes will be training simultaneously, so we can scale
    # down the desired gradient accumulation iterations per process proportionally
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    # if not ddp, we are running on a single gpu, and one process
    master_process = True
    seed_offset = 0
    ddp_world_size = 1

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)

data = torch.randint(vocab_size, (4000,), dtype=torch.long)


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets):
        x = self.wte(idx)
        logits = self.lm_head(x + self.mlp(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


model = TinyLM()
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
if ddp:
    model = DDP(model)
raw_model = model.module if ddp else model  # unwrap DDP container if needed

X, Y = get_batch()
iter_num = 0
while True:
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            # in DDP training we only need to sync gradients at the last micro step.
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        logits, loss = model(X, Y)
        loss = loss / gradient_accumulation_steps
        X, Y = get_batch()
        loss.backward()
        xm.mark_step()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if master_process:
        xm.add_step_closure(lambda iter_num, loss, gradient_accumulation_steps: print(f"step {iter_num} loss {loss.item() * gradient_accumulation_steps:.6e}"), args=(iter_num, loss, gradient_accumulation_steps))
    iter_num += 1
    if iter_num >= max_iters:
        break
    xm.mark_step()

if master_process:
    torch.save({'model': raw_model.state_dict(), 'iter_num': iter_num}, os.path.join(out_dir, 'ckpt.pt'))
if ddp:
    destroy_process_group()
