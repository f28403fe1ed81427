"""A smoothed loss with a bias correction, as Adam corrects its moments: the step number,
a Python int, goes into ``pow`` and is compiled into the graph (XLD102 on that line)."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
beta = torch.tensor(0.9, device=device)
smoothed = torch.zeros((), device=device)

for step in range(1, 17):
    x, y = torch.randn(4, 8).to(device), torch.randn(4, 1).to(device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    smoothed = beta * smoothed + (1 - beta) * loss.detach()
    corrected = smoothed / (1 - beta.pow(step))
    torch_xla.sync()
