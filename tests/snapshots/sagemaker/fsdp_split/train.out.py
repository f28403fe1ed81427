"""FSDP launched by torchrun, its training loop in train_utils.py.

    torchrun --standalone --nproc-per-node=gpu train.py
"""

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp
from train_utils import train


def main():
    dist.init_process_group("xla", init_method="xla://")
    local_rank = xm.get_local_ordinal()
    dataset = TensorDataset(torch.randn(64, 20), torch.randint(0, 4, (64,)))
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal()))
    model = FSDP(torch.nn.Linear(20, 4).to(xm.xla_device()), device_id=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        train(model, loader, optimizer, epoch, local_rank)


def _mp_fn(index):
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
