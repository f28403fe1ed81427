"""A converted script as it should be: fixed shapes (drop_last=True), the batches fed by
MpDeviceLoader, the loss logged from a step closure.  The doctor finds a steady state."""

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

device = torch_xla.device()
torch.manual_seed(0)
dataset = TensorDataset(torch.randn(44, 8), torch.randn(44, 1))
loader = DataLoader(dataset, batch_size=8, shuffle=True, drop_last=True)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


def log(step, loss):
    print(f"step {step} loss {loss.item():.4f}")


for epoch in range(3):
    for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        if step % 2 == 0:
            xm.add_step_closure(log, args=(step, loss))
