"""MNIST-like training on TPU, written against torch_xla 1.13.

Uses the pre-2.0 runtime helpers (xrt_world_size, get_ordinal, ...).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--lr', type=float, default=0.01)
    args = parser.parse_args()

    torch.manual_seed(1)
    device = torch_xla.device()

    world_size = xr.world_size()
    rank = xr.global_ordinal()
    local_rank = xr.local_ordinal()
    xm.master_print('world_size={} rank={} local_rank={}'.format(world_size, rank, local_rank))

    train_set = TensorDataset(torch.randn(256, 1, 28, 28), torch.randint(0, 10, (256,)))
    train_sampler = torch.utils.data.distributed.DistributedSampler(
        train_set, num_replicas=world_size, rank=rank, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler)

    model = Net().to(device)
    optimizer = optim.SGD(model.parameters(), lr=args.lr * world_size, momentum=0.5)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        para_loader = pl.MpDeviceLoader(train_loader, device)
        for data, target in para_loader:
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda step, loss: xm.master_print('step {} loss {:.6e}'.format(step, loss.item())), args=(step, loss))
            step += 1

    # evaluation over plain host tensors moved to the device by hand
    model.eval()
    eval_x = torch.randn(64, 1, 28, 28)
    eval_y = torch.randint(0, 10, (64,))
    correct = 0
    with torch.no_grad():
        for i in range(0, 64, 16):
            data = eval_x[i:i + 16].to(device)
            target = eval_y[i:i + 16].to(device)
            pred = model(data).argmax(dim=1)
            correct += pred.eq(target).sum()
            torch_xla.sync()
    xm.master_print('eval accuracy: {:.4f}'.format(correct.item() / 64))

    xm.save(model.state_dict(), "model.pt")


def _mp_fn(index):
    main()


if __name__ == '__main__':
    main()
