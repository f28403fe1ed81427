"""A class-based DDP trainer with gradient accumulation: the micro-steps that do not
step the optimizer run under ``model.no_sync()``, so DDP all-reduces once per
optimizer step.  Started by ``python -m torch.distributed.launch`` (which passes
--local_rank) or by torchrun (LOCAL_RANK, RANK and WORLD_SIZE in the environment).

Without CUDA it trains in one CPU process with the gloo backend.
"""
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", "--local-rank", type=int, default=xm.get_local_ordinal())
    parser.add_argument("--dist-backend", default="xla", type=str, help="distributed backend")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    return parser.parse_args()


class AccumulatingTrainer:
    def __init__(self, model, loader, sampler, optimizer, accum_steps, device):
        self.model = model
        self.loader = loader
        self.sampler = sampler
        self.optimizer = optimizer
        self.accum_steps = accum_steps
        self.device = device
        self.criterion = nn.CrossEntropyLoss()
        self.step = 0

    def train_epoch(self, epoch):
        self.sampler.set_epoch(epoch)
        self.model.train()
        for i, (inputs, labels) in enumerate(self.loader):
            inputs = inputs.to(self.device)
            labels = labels.to(self.device)
            sync = (i + 1) % self.accum_steps == 0
            context = contextlib.nullcontext() if sync else self.model.no_sync()
            with context:
                loss = self.criterion(self.model(inputs), labels) / self.accum_steps
                loss.backward()
            if sync:
                self.optimizer.step()
                self.optimizer.zero_grad()
            xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(self.step, loss))
            self.step += 1
            xm.mark_step()


def main():
    args = parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    world_size = xm.xrt_world_size()
    rank = xm.get_ordinal()
    if not torch.cuda.is_available():
        args.dist_backend = "xla"
    dist.init_process_group(args.dist_backend, init_method="xla://")
    device = xm.xla_device()

    torch.manual_seed(0)
    features = torch.randn(256, 12)
    labels = (features[:, :3].sum(dim=1) > 0).long() + (features[:, 3] > 1).long()
    dataset = TensorDataset(features, labels)
    sampler = DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, drop_last=True)

    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
    model = DistributedDataParallel(
        model,
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * xm.xrt_world_size())

    trainer = AccumulatingTrainer(model, loader, sampler, optimizer, args.accum_steps, device)
    for epoch in range(args.epochs):
        trainer.train_epoch(epoch)
    dist.barrier()
    if xm.get_ordinal() == 0:
        torch.save(model.module.state_dict(), "accumulated.pt")
    dist.destroy_process_group()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
