"""One GPU picked with --gpu, or all of them through DataParallel (which then scatters
the inputs itself): the batches move only when --gpu is given."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


def train(loader, model, criterion, optimizer, args, step):
    model.train()
    for images, target in loader:
        images = images.to(xm.xla_device(), non_blocking=True)
        target = target.to(xm.xla_device(), non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
        step += 1
        xm.mark_step()
    return step


def validate(loader, model, criterion, args):
    model.eval()
    losses = AverageMeter()
    correct = AverageMeter()
    with torch.no_grad():
        for images, target in loader:
            images = images.to(xm.xla_device(), non_blocking=True)
            target = target.to(xm.xla_device(), non_blocking=True)
            output = model(images)
            losses.update(criterion(output, target), images.size(0))
            correct.update((output.argmax(1) == target).float().mean(), images.size(0))
            xm.mark_step()
    print(f"validation loss {float(losses.avg):.6f} accuracy {float(correct.avg):.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", default=None, type=int)
    parser.add_argument("--epochs", default=2, type=int)
    args = parser.parse_args()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(64, 10, generator=g), torch.randint(0, 3, (64,), generator=g))
    loader = DataLoader(data, batch_size=8, shuffle=False)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    if args.gpu is not None:
        model = model.to(xm.xla_device())
    else:
        model = model.to(xm.xla_device())
    criterion = nn.CrossEntropyLoss().to(xm.xla_device())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = 0
    for epoch in range(args.epochs):
        step = train(loader, model, criterion, optimizer, args, step)
        validate(loader, model, criterion, args)


if __name__ == "__main__":
    main()
