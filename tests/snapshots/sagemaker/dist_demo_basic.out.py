"""The PyTorch "Getting Started with Distributed Data Parallel" demo: each spawned
process builds a toy model, wraps it in DDP and runs one forward, backward and
optimizer step, outside any loop.

Without CUDA it runs one process on the CPU with the gloo backend.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def setup(rank, world_size):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ.setdefault('MASTER_PORT', '12355')

    # initialize the process group
    dist.init_process_group("xla", init_method="xla://")


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size):
    world_size = xm.xrt_world_size()
    print(f"Running basic DDP example on rank {rank}.")
    setup(rank, world_size)
    torch.manual_seed(0)

    # create model and move it to GPU with id rank
    device = xm.xla_device()
    model = ToyModel().to(device)
    ddp_model = DDP(model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10, device=xm.xla_device()))
    labels = torch.randn(20, 5).to(device)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    xm.mark_step()
    print(f"step 0 loss {loss.item():.6e}")

    cleanup()
    print(f"Finished running basic DDP example on rank {rank}.")


def run_demo(demo_fn, world_size):
    xmp.spawn(demo_fn, args=(world_size,))


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 1
    world_size = n_gpus
    run_demo(demo_basic, world_size)
