"""FSDP launched by torchrun, its training loop in train_utils.py.

    torchrun --standalone --nproc-per-node=gpu train.py
"""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.distributed.fsdp as xla_fsdp
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.runtime as xr
from train_utils import train


def main():
    dist.init_process_group("xla", init_method="xla://")
    local_rank = xr.local_ordinal()
    dataset = TensorDataset(torch.randn(64, 20), torch.randint(0, 4, (64,)))
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal()))
    model = xla_fsdp.XlaFullyShardedDataParallel(torch.nn.Linear(20, 4).to(torch_xla.device()))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        train(model, loader, optimizer, epoch, local_rank)


def _mp_fn(index):
    main()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
