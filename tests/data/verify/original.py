"""The original of clean_port.py and wrong_scaling_port.py: CUDA when there is one."""

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
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
