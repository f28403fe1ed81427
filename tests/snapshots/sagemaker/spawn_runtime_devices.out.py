"""
Multi-GPU training started with mp.spawn: device strings built at run time, checks
on the device type, NCCL settings, a GPU count the launcher computes with, and a
profiler run with CUDA activity.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def worker(rank, world_size, args):
    world_size = xm.xrt_world_size()
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    os.environ["NCCL_P2P_DISABLE"] = "1"
    dist.init_process_group("xla", init_method="xla://")
    loc = "xla"
    device = torch.device(loc)
    model = DDP(nn.Linear(32, 4).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if device.type in ('cuda',):
        pass
    for step in range(args.steps):
        x = torch.randn(args.batch_size, 32, device="xla")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if 'cuda' in str(device) and rank == 0:
            xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.4f}"), args=(step, loss))
        xm.mark_step()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        model(torch.randn(args.batch_size, 32, device=device)).sum().backward()
    xm.master_print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=5))
    dist.destroy_process_group()


def _mp_fn(index):
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    world_size = xm.xrt_world_size()
    args.lr = args.lr * world_size  # linear scaling rule
    worker(index, world_size, args)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
