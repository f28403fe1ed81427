"""Entry point of a small vision-style repository: model and optimizer here, the loops in
engine.py, the device, the AMP scaler and checkpoints in the utils package."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import torch_xla.amp.syncfree as syncfree

import datasets
from engine import evaluate, train_one_epoch
from utils import NativeScalerWithGradNormCount as NativeScaler
from utils import get_device, save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--output_dir", default="out")
    args = parser.parse_args()
    torch.manual_seed(0)

    device = get_device()
    train_set = datasets.build_dataset()
    loader = DataLoader(train_set, batch_size=16, shuffle=False, drop_last=True)
    model = nn.Sequential(nn.Linear(24, 64), nn.GELU(), nn.Linear(64, 4)).to(device)
    optimizer = syncfree.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    loss_scaler = NativeScaler()

    step = 0
    for epoch in range(args.epochs):
        step = train_one_epoch(model, loader, optimizer, device, loss_scaler, epoch, args.epochs, args.lr, step)
        print(f"epoch {epoch} accuracy {evaluate(model, loader, device):.3f}")
    os.makedirs(args.output_dir, exist_ok=True)
    save_checkpoint(os.path.join(args.output_dir, "checkpoint.pth"), model, optimizer, loss_scaler, args.epochs)


if __name__ == "__main__":
    main()
