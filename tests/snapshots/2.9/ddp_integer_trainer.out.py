"""torchrun DDP with an integer device: the trainer keeps its GPU number
(``self.gpu_id``) and moves the model and each batch with ``.to(self.gpu_id)``; the
model and its optimizer are built in another function, before the trainer moves the
model (on CUDA the optimizer still steps the moved parameters).

    torchrun --standalone --nproc-per-node=gpu ddp_integer_trainer.py
"""

import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.runtime as xr


class Trainer:
    def __init__(self, model, loader, optimizer, scheduler):
        self.gpu_id = xr.local_ordinal()
        self.model = model.to(torch_xla.device())
        self.loader = loader
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.model = DDP(self.model)
        self.step = 0

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()
        return loss

    def train(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for source, targets in self.loader:
                source = source.to(torch_xla.device())
                targets = targets.to(torch_xla.device())
                loss = self._run_batch(source, targets)
                xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(self.step, loss))
                self.step += 1
                torch_xla.sync()
            self.scheduler.step()
        if self.gpu_id == 0:
            xm.save(self.model.module.state_dict(), "trained.pt")


def load_train_objs():
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(96, 12, generator=g), torch.randint(0, 3, (96,), generator=g))
    model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Linear(24, 3))
    optimizer = torch.optim.SGD(model.to(torch_xla.device()).parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    return data, model, optimizer, scheduler


def main(epochs=2):
    init_process_group("xla", init_method="xla://")
    torch.manual_seed(0)
    data, model, optimizer, scheduler = load_train_objs()
    loader = DataLoader(data, batch_size=12, shuffle=False, sampler=DistributedSampler(data, num_replicas=xr.world_size(), rank=xr.global_ordinal()))
    Trainer(model, loader, optimizer, scheduler).train(epochs)
    destroy_process_group()


def _mp_fn(index):
    main()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=())
