"""Three epochs over 100 samples in batches of 16: the seventh batch of every epoch
has 4 samples."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

torch.manual_seed(9)
device = torch_xla.device()

data = torch.randn(100, 12)
labels = data[:, :3].sum(1, keepdim=True)
train_loader = DataLoader(TensorDataset(data, labels), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.Linear(24, 1)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)

step = 0
for epoch in range(3):
    for inputs, targets in pl.MpDeviceLoader(train_loader, device):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = nn.functional.smooth_l1_loss(model(inputs), targets)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
        step += 1
