"""A Fabric script in the style of Lightning's Fabric image classifier example: the
loop is the script's own, Fabric sets up the model, optimizer and loader, runs the
backward pass and moves tensors; the script picks CUDA, DDP and float16 by flags.

    python fabric_loop.py --accelerator cuda --devices 2
"""
import argparse

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm


def run(args):
    fabric = Fabric(accelerator=args.accelerator, devices=args.devices, strategy="ddp", precision="16-mixed")
    fabric.launch()
    fabric.seed_everything(1)
    model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = fabric.setup(model, optimizer)
    data = TensorDataset(torch.randn(128, 20), torch.randint(0, 4, (128,)))
    loader = fabric.setup_dataloaders(DataLoader(data, batch_size=16, shuffle=True))
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            fabric.backward(loss)
            optimizer.step()
            if step % 4 == 0:
                fabric.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    mask = torch.ones(4).to(xm.xla_device())
    fabric.print(mask.sum())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="cuda")
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=2)
    run(parser.parse_args())
