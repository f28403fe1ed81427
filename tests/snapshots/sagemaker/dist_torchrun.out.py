"""DDP training launched by torchrun, in the style of the PyTorch DDP tutorial series
("multigpu_torchrun.py"): the process reads LOCAL_RANK from the environment, the model
goes to that GPU and into DDP, the loader gets a DistributedSampler, and rank 0 saves
snapshots that a restarted job resumes from.

    torchrun --standalone --nproc-per-node=gpu dist_torchrun.py

Without CUDA each process trains on the CPU with the gloo backend.
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


def ddp_setup():
    if torch.cuda.is_available():
        init_process_group("xla", init_method="xla://")
    else:
        init_process_group("xla", init_method="xla://")


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.randint(0, 4, ()).item()) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.local_rank = xm.get_local_ordinal()
        self.global_rank = xm.get_ordinal()
        self.device = "xla"
        self.model = model.to(self.device)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.step = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            print("Loading snapshot")
            self._load_snapshot(snapshot_path)
        self.model = DDP(self.model)

    def _load_snapshot(self, snapshot_path):
        snapshot = torch.load(snapshot_path, map_location="cpu")
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.global_rank}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in pl.MpDeviceLoader(self.train_data, self.device):
            source = source.to(self.device)
            targets = targets.to(self.device)
            loss = self._run_batch(source, targets)
            xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(self.step, loss))
            self.step += 1

    def _save_snapshot(self, epoch):
        snapshot = {
            "MODEL_STATE": self.model.module.state_dict(),
            "EPOCHS_RUN": epoch,
        }
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.local_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    train_set = MyTrainDataset(128)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.to(xm.xla_device()).parameters(), lr=5e-2)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        sampler=DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal()),
    )


def main(save_every, total_epochs, batch_size, snapshot_path="snapshot.pt"):
    ddp_setup()
    torch.manual_seed(0)
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)
    destroy_process_group()


def _mp_fn(index):
    import argparse

    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("--total_epochs", default=2, type=int, help="Total epochs to train the model")
    parser.add_argument("--save_every", default=1, type=int, help="How often to save a snapshot")
    parser.add_argument("--batch_size", default=16, type=int, help="Input batch size on each device (default: 16)")
    args = parser.parse_args()

    main(args.save_every, args.total_epochs, args.batch_size)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
