"""The data lives on the device and each step slices it with the loop's index: the bounds
are compiled into every step's graph (bounded-graphs names the slice, as the doctor does)."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
features, labels = torch.randn(64, 8).to(device), torch.randn(64, 1).to(device)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(16):
    x = features[step * 4:(step + 1) * 4]
    y = labels[step * 4:(step + 1) * 4]
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
