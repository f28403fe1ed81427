"""Regression with gradient accumulation and gradient clipping.

Some batches in the stream can end up empty after filtering out rows with
missing targets, so the loop skips them.
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm


class MLPRegressor(nn.Module):
    """Small residual MLP with layer norm (a transformer block without attention)."""

    def __init__(self, in_dim=12, hidden=32):
        super().__init__()
        self.proj = nn.Linear(in_dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.ff = nn.Sequential(nn.Linear(hidden, hidden * 2), nn.GELU(), nn.Linear(hidden * 2, hidden))
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.proj(x)
        h = h + self.ff(self.norm(h))
        return self.head(h).squeeze(-1)


def build_data(n=192, in_dim=12):
    x = torch.randn(n, in_dim)
    w = torch.randn(in_dim)
    y = x @ w + 0.1 * torch.randn(n)
    # mark some targets as missing; the rows 48..55 form one whole batch
    y[48:56] = float('nan')
    y[100] = float('nan')
    return TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--lr', type=float, default=3e-3)
    parser.add_argument('--max-grad-norm', type=float, default=1.0)
    args = parser.parse_args()

    torch.manual_seed(1234)
    device = xm.xla_device()

    dataset = build_data()
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False)

    model = MLPRegressor().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    criterion = nn.MSELoss()
    accumulation_steps = 4

    global_step = 0
    updates = 0
    model.train()
    optimizer.zero_grad()
    for epoch in range(args.epochs):
        for i, (inputs, targets) in enumerate(loader):
            keep = ~torch.isnan(targets)
            inputs, targets = inputs[keep], targets[keep]
            if inputs.numel() == 0:
                xm.mark_step()
                continue

            inputs = inputs.to(device)
            targets = targets.to(device)

            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss = loss / accumulation_steps
            loss.backward()
            xm.add_step_closure(lambda global_step, loss: print(f"step {global_step} loss {loss.item():.6e}"), args=(global_step, loss))
            global_step += 1

            if (i + 1) % accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                xm.optimizer_step(optimizer)
                optimizer.zero_grad()
                updates += 1
            xm.mark_step()

    print(f"finished: {global_step} micro-batches, {updates} optimizer updates")


if __name__ == "__main__":
    main()
