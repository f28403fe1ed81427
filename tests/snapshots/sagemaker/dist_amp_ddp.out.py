"""Mixed-precision DDP training under torchrun: autocast and a GradScaler around a DDP
model, with the loader split between the processes by a DistributedSampler.

    torchrun --standalone --nproc-per-node=gpu dist_amp_ddp.py

Without CUDA it runs in full precision on the CPU with the gloo backend.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.amp
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def setup():
    local_rank = xm.get_local_ordinal()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29501")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    dist.init_process_group("xla", init_method="xla://")
    return local_rank, xm.xla_device()
    dist.init_process_group("xla", init_method="xla://")
    return local_rank, torch.device("cpu")


def main():
    local_rank, device = setup()
    use_amp = True
    torch.manual_seed(0)

    signals = torch.randn(384, 16)
    classes = (signals[:, :4].sum(dim=1) > 0).long() + (signals[:, 4:8].sum(dim=1) > 0).long()
    dataset = TensorDataset(signals, classes)
    sampler = DistributedSampler(dataset, shuffle=True, seed=7, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, drop_last=True)

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 3)).to(device)
    model = DDP(model)
    optimizer = syncfree.AdamW(model.parameters(), lr=3e-3)
    scaler = torch_xla.amp.GradScaler(enabled=use_amp)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for inputs, labels in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            with torch_xla.amp.autocast(xm.xla_device(), enabled=use_amp):
                loss = criterion(model(inputs), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if xm.get_ordinal() == 0:
                xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
            step += 1
            xm.mark_step()

    if xm.get_ordinal() == 0:
        torch.save(model.module.state_dict(), "amp_ddp.pt")
    dist.destroy_process_group()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
