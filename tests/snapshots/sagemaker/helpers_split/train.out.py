"""Trains a small classifier; device setup and checkpointing live in device_utils."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm

from device_utils import get_device, save_checkpoint
from device_utils import AverageMeter, count_parameters, set_seed


def build_model(in_dim, num_classes):
    return nn.Sequential(
        nn.Linear(in_dim, 32),
        nn.ReLU(),
        nn.Linear(32, num_classes),
    )


def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            correct += (model(inputs).argmax(1) == targets).sum().item()
            total += targets.size(0)
    return correct / total


def main():
    parser = argparse.ArgumentParser(description="split-helpers training example")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--checkpoint", default="checkpoints/model.pt")
    args = parser.parse_args()

    set_seed(5)
    device = get_device()

    features = torch.randn(240, 20)
    labels = torch.randint(0, 5, (240,))
    loader = DataLoader(TensorDataset(features, labels), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(torch.randn(48, 20), torch.randint(0, 5, (48,))),
                            batch_size=args.batch_size)

    model = build_model(20, 5).to(device)
    print('model has %d trainable parameters' % count_parameters(model))
    optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        meter = AverageMeter('train_loss')
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            xm.optimizer_step(optimizer)
            meter.update(loss.item(), inputs.size(0))
            xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
            step += 1
            xm.mark_step()
        val_acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: {meter}, val acc {val_acc:.3f}")
        save_checkpoint(model, args.checkpoint)


if __name__ == "__main__":
    main()
