"""A loss over the positive targets only, picked with a boolean mask: how many there are
depends on the data, so the graph after it has a new shape at each step (XLD102), and
torch_xla computes the selection on the CPU (XLD103)."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(16):
    x, y = torch.randn(16, 8).to(device), torch.randn(16).to(device)
    prediction = model(x).squeeze(1)
    positive = y > 0
    loss = ((prediction[positive] - y[positive]) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
