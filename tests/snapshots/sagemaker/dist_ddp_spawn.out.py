"""Multi-GPU training with DDP started by mp.spawn, in the style of the PyTorch DDP
tutorial series ("multigpu.py"): ddp_setup with MASTER_ADDR, a Trainer class that
wraps its model in DDP(model, device_ids=[gpu_id]), a DistributedSampler with
set_epoch, and a checkpoint of model.module saved by rank 0.

Without CUDA it runs one process on the CPU with the gloo backend.
"""
import os

import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp


def ddp_setup(rank, world_size):
    """
    Args:
        rank: Unique identifier of each process
        world_size: Total number of processes
    """
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "12355")
    backend = "xla"
    init_process_group(backend=backend, init_method="xla://")


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id, save_every):
        self.gpu_id = gpu_id
        self.device = xm.xla_device()
        self.model = model.to(self.device)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.step = 0
        self.model = DDP(self.model)

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        loss.backward()
        self.optimizer.step()
        print(f"step {self.step} loss {loss.item():.6e}")
        self.step += 1

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in pl.MpDeviceLoader(self.train_data, self.device):
            source = source.to(self.device)
            targets = targets.to(self.device)
            self._run_batch(source, targets)

    def _save_checkpoint(self, epoch):
        ckp = self.model.module.state_dict()
        PATH = "checkpoint.pt"
        torch.save(ckp, PATH)
        print(f"Epoch {epoch} | Training checkpoint saved at {PATH}")

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_checkpoint(epoch)


def load_train_objs():
    train_set = MyTrainDataset(128)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.to(xm.xla_device()).parameters(), lr=1e-2)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        sampler=DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal()),
    )


def main(rank, world_size, save_every, total_epochs, batch_size):
    world_size = xm.xrt_world_size()
    ddp_setup(rank, world_size)
    torch.manual_seed(0)
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, rank, save_every)
    trainer.train(total_epochs)
    destroy_process_group()


def _mp_fn(index):
    import argparse

    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("--total_epochs", default=2, type=int, help="Total epochs to train the model")
    parser.add_argument("--save_every", default=1, type=int, help="How often to save a snapshot")
    parser.add_argument("--batch_size", default=16, type=int, help="Input batch size on each device (default: 16)")
    args = parser.parse_args()

    world_size = xm.xrt_world_size() if torch.cuda.is_available() else 1
    main(index, world_size, args.save_every, args.total_epochs, args.batch_size)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
