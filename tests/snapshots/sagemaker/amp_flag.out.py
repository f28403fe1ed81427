"""Mixed precision behind a command-line flag, switched off where CUDA is missing:
`use_amp = args.amp and torch.cuda.is_available()`, a positional autocast flag, and a
scaler built with enabled=use_amp."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.amp
import torch_xla.amp.syncfree as syncfree
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def train_epoch(model, loader, optimizer, scaler, device, use_amp, step):
    criterion = nn.BCEWithLogitsLoss()
    for features, target in pl.MpDeviceLoader(loader, device):
        features, target = features.to(device), target.to(device)
        optimizer.zero_grad()
        with torch_xla.amp.autocast(xm.xla_device(), enabled=use_amp):
            logits = model(features).squeeze(-1)
            loss = criterion(logits.float(), target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        step += 1
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(3)

    use_amp = args.amp
    device = xm.xla_device()
    features = torch.randn(96, 20)
    target = (features[:, 0] + features[:, 1] > 0).float()
    loader = DataLoader(TensorDataset(features, target), batch_size=16, shuffle=False, drop_last=True)

    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
    optimizer = syncfree.Adam(model.parameters(), lr=1e-2)
    scaler = torch_xla.amp.GradScaler(enabled=use_amp)
    step = 0
    for _ in range(args.epochs):
        step = train_epoch(model, loader, optimizer, scaler, device, use_amp, step)


if __name__ == "__main__":
    main()
