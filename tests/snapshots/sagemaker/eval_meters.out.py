"""Training with an ImageNet-example style validation: AverageMeter objects keep running
sums (``self.sum += val * n``); the loss meter gets host numbers (``loss.item()``), the
accuracy meter device tensors, and every other batch the running accuracy is shown.

    python eval_meters.py --epochs 3
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    def summary(self):
        return f"{self.sum / self.count:.6f}"


def accuracy(output, target):
    return (output.argmax(1) == target).float().mean() * 100


def validate(batches, model, device, counter):
    model.eval()
    losses = AverageMeter("Loss")
    top1 = AverageMeter("Acc@1")
    with torch.no_grad():
        for i, (images, target) in enumerate(batches):
            images = images.to(device)
            target = target.to(device)
            output = model(images)
            loss = F.cross_entropy(output, target)
            losses.update(loss.item(), images.size(0))
            top1.update(accuracy(output, target), images.size(0))
            if i % 2 == 1:
                print(f"step {counter} loss {top1.summary()}")
                counter += 1
            xm.mark_step()
    print(f"validation loss {losses.sum / losses.count:.4f} acc {top1.summary()}")
    return counter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    device = xm.xla_device()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train = [(torch.randn(8, 10, generator=g), torch.randint(0, 4, (8,), generator=g)) for _ in range(6)]
    val = [(torch.randn(8, 10, generator=g), torch.randint(0, 4, (8,), generator=g)) for _ in range(8)]
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    counter = 0
    for epoch in range(args.epochs):
        model.train()
        for images, target in train:
            images, target = images.to(device), target.to(device)
            loss = F.cross_entropy(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.add_step_closure(lambda counter, loss: print(f"step {counter} loss {loss.item():.6f}"), args=(counter, loss))
            counter += 1
            xm.mark_step()
        counter = validate(val, model, device, counter)


if __name__ == "__main__":
    main()
