"""44 samples in batches of 8: the sixth batch of each epoch has 4, and a batch of
another shape is another graph (XLD106 on the DataLoader; drop_last=True avoids it)."""

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

device = torch_xla.device()
torch.manual_seed(0)
dataset = TensorDataset(torch.randn(44, 8), torch.randn(44, 1))
loader = DataLoader(dataset, batch_size=8, shuffle=True)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for x, y in pl.MpDeviceLoader(loader, device):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
