"""A CUDA call left in the loop (no-cuda-calls names it): it needs a CUDA device."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
features, labels = torch.randn(64, 8), torch.randn(64, 1)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(16):
    x = features[step * 4:(step + 1) * 4].to(device)
    y = labels[step * 4:(step + 1) * 4].to(device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    torch.cuda.synchronize()
