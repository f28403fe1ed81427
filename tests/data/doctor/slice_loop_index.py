"""The whole data set goes to the device once; each step slices it with the loop's index.

Each slice bound is compiled into the graph: every step is a new graph (XLD102 on the
two slicing lines)."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
features = torch.randn(64, 8).to(device)
labels = torch.randn(64, 1).to(device)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for start in range(0, 64, 4):
    x = features[start:start + 4]
    y = labels[start:start + 4]
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
