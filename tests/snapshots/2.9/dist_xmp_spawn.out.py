"""Multi-core MNIST-style training written for torch_xla 1.x (in the style of its
test_train_mp_mnist.py): xmp.spawn with nprocs, per-process ordinals and world size
from xla_model, a DistributedSampler and MpDeviceLoader, and the learning rate scaled
by the number of replicas.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MNIST(nn.Module):
    def __init__(self):
        super(MNIST, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.fc1 = nn.Linear(4 * 12 * 12, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        return F.log_softmax(self.fc1(torch.flatten(x, 1)), dim=1)


def train_mnist(flags):
    torch.manual_seed(1)
    train_dataset = TensorDataset(torch.randn(320, 1, 28, 28), torch.randint(0, 10, (320,)))
    train_sampler = None
    if xr.world_size() > 1:
        train_sampler = DistributedSampler(
            train_dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    train_loader = DataLoader(
        train_dataset,
        batch_size=flags.batch_size,
        sampler=train_sampler,
        drop_last=True,
        shuffle=False if train_sampler else True)

    lr = flags.lr * xr.world_size()
    device = torch_xla.device()
    model = MNIST().to(device)
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=flags.momentum)
    loss_fn = nn.NLLLoss()

    step = 0
    for epoch in range(flags.num_epochs):
        model.train()
        for data, target in pl.MpDeviceLoader(train_loader, device):
            optimizer.zero_grad()
            loss = loss_fn(model(data), target)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda step=step, loss=loss: print(f"step {step} loss {loss.item():.6e}"))
            step += 1
    xm.save(model.state_dict(), "mnist.pt")


def _mp_fn(index, flags):
    torch.set_default_dtype(torch.float32)
    train_mnist(flags)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_cores', type=int, default=8)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--num_epochs', type=int, default=1)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--momentum', type=float, default=0.5)
    FLAGS = parser.parse_args()
    torch_xla.launch(_mp_fn, args=(FLAGS,), start_method='fork')
