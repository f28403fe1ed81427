"""Training at module level in the style of nanoGPT and build-nanogpt: a check of the
environment says whether torchrun started the script, and picks DDP on one GPU per
process or a single device.

    python module_ddp.py
    torchrun --standalone --nproc-per-node=gpu module_ddp.py
"""
import os

import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)

ddp = int(os.environ.get("RANK", -1)) != -1  # started by torchrun?
if ddp:
    # DDP here needs CUDA: one GPU per process
    init_process_group("xla", init_method="xla://")
    ddp_rank = xm.get_ordinal()
    ddp_local_rank = xm.get_local_ordinal()
    ddp_world_size = xm.xrt_world_size()
    device = "xla"
    master_process = ddp_rank == 0
else:
    ddp_rank = 0
    ddp_world_size = 1
    master_process = True
    device = "cpu"
    device = "xla"
print(f"using device: {device}")

torch.manual_seed(1337)
model = nn.Sequential(nn.Embedding(13, 8), nn.Flatten(), nn.Linear(8 * 8, 13))
model.to(device)
if ddp:
    model = DDP(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

g = torch.Generator().manual_seed(0)
tokens = torch.randint(0, 13, (10, 8, 9), generator=g)
for step in range(12):
    batch = tokens[step % 10]
    x, y = batch[:, :-1].to(device), batch[:, -1].to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    # The mean over the processes, as build-nanogpt logs it (the xla process group has no AVG).
    loss_mean = loss.detach().clone()
    if ddp:
        xm.all_reduce("sum", [loss_mean], scale=1.0 / xm.xrt_world_size())
    if master_process:
        xm.add_step_closure(lambda step, loss_mean: print(f"step {step} loss {loss_mean.item():.6f}"), args=(step, loss_mean))
    xm.mark_step()

if ddp:
    destroy_process_group()
