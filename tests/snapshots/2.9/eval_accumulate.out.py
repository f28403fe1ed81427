"""Classifier with a training loop and two styles of evaluation loop.

``validate`` keeps its running totals on the device and only reads them back
once at the end, while ``evaluate_with_reads`` calls ``.item()`` on every batch.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.manual_seed(11)
device = torch_xla.device()


def make_split(n):
    x = torch.randn(n, 16)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return TensorDataset(x, y)


train_loader = DataLoader(make_split(256), batch_size=32, shuffle=True)
val_loader = DataLoader(make_split(96), batch_size=32)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def train_epoch(start_step):
    model.train()
    step = start_step
    for x, y in pl.MpDeviceLoader(train_loader, device):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = loss_fn(out, y)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6e}"), args=(step, loss))
        step += 1
    return step


def validate():
    """Accumulate on the device; a single host read after the loop."""
    model.eval()
    total_loss = torch.zeros((), device=device)
    total_correct = torch.zeros((), dtype=torch.long, device=device)
    n_batches = 0
    with torch.no_grad():
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            total_loss += loss_fn(out, y)
            pred = out.argmax(dim=1)
            total_correct += (pred == y).sum()
            n_batches += 1
            torch_xla.sync()
    avg_loss = total_loss.item() / n_batches
    acc = total_correct.item() / len(val_loader.dataset)
    return avg_loss, acc


def evaluate_with_reads():
    """Same metrics, but reading each batch's values back every iteration."""
    model.eval()
    losses = []
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            losses.append(loss_fn(out, y).item())
            correct += (out.argmax(dim=1) == y).sum().item()
    return sum(losses) / len(losses), correct / len(val_loader.dataset)


if __name__ == "__main__":
    step = 0
    for epoch in range(2):
        step = train_epoch(step)
        val_loss, val_acc = validate()
        print(f"epoch {epoch} validate: loss {val_loss:.6f} acc {val_acc:.4f}")
        eval_loss, eval_acc = evaluate_with_reads()
        print(f"epoch {epoch} evaluate_with_reads: loss {eval_loss:.6f} acc {eval_acc:.4f}")
