"""The optimizer is made before the model moves: on XLA, module.to(device) makes new
parameters, so the optimizer steps CPU copies the forward never uses (optimizer-params-on-xla)."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
features, labels = torch.randn(64, 8), torch.randn(64, 1)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model.to(device)

for step in range(16):
    x = features[step * 4:(step + 1) * 4].to(device)
    y = labels[step * 4:(step + 1) * 4].to(device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
