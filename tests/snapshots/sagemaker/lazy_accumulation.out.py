"""A classifier that keeps a running loss on the host (``total += loss.item()``) and
prints its average every few steps, next to the per-step loss."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.manual_seed(5)
device = xm.xla_device()

x = torch.randn(320, 10)
y = (x[:, 0] * x[:, 1] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, drop_last=True)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()

log_every = 5
running = 0.0
for step, (inputs, labels) in enumerate(pl.MpDeviceLoader(loader, device)):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    xm.optimizer_step(optimizer)
    running += loss.item()
    xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
    if (step + 1) % log_every == 0:
        print(f"average {running / log_every:.6f}")
        running = 0.0
