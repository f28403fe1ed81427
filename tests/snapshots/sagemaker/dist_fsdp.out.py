"""FSDP training launched by torchrun, in the style of the PyTorch FSDP tutorial
("FSDP_mnist.py"): the model is wrapped by FullyShardedDataParallel with a size-based
auto-wrap policy, mixed precision on request, the loader gets a DistributedSampler,
and on request a full state dict is gathered on rank 0 and saved.

    torchrun --standalone --nproc-per-node=gpu dist_fsdp.py [--bf16] [--save-model]

Without CUDA each process trains on the CPU with the gloo backend.
"""
import argparse
import functools

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import (
    FullStateDictConfig,
    FullyShardedDataParallel as FSDP,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
)
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp

bf16_policy = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def setup():
    if torch.cuda.is_available():
        dist.init_process_group("xla", init_method="xla://")
    else:
        dist.init_process_group("xla", init_method="xla://")


def train(args, model, loader, optimizer, epoch):
    model.train()
    loader.sampler.set_epoch(epoch)
    for step, (data, target) in enumerate(pl.MpDeviceLoader(loader, args.device)):
        data, target = data.to(args.device), target.to(args.device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        xm.add_step_closure(lambda value, loss: print(f"step {value} loss {loss.item():.6e}"), args=(epoch * len(loader) + step, loss))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--save-model", action="store_true")
    args = parser.parse_args()

    setup()
    rank = xm.get_ordinal()
    local_rank = xm.get_local_ordinal()
    args.device = xm.xla_device()

    torch.manual_seed(0)
    features = torch.randn(128, 20)
    labels = (features[:, :4].argmax(dim=1) + (features[:, 4] > 1).long()) % 4
    dataset = TensorDataset(features, labels)
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal()))

    model = Net().to(args.device)
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=1000)
    model = FSDP(
        model,
        auto_wrap_policy=policy,
        mixed_precision=bf16_policy if args.bf16 else None,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=args.device,
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    for epoch in range(args.epochs):
        train(args, model, loader, optimizer, epoch)

    if args.save_model:
        dist.barrier()
        save_policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy):
            state = model.state_dict()
        if rank == 0:
            torch.save(state, "fsdp_net.pt")
    dist.destroy_process_group()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
