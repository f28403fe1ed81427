"""Saves a checkpoint with torch.save after every step: each save reads the parameters back
to the host (XLD103), on the line the static rule XLA401 (torch.save -> xm.save) flags."""

import torch
import torch.nn as nn
import torch_xla

device = torch_xla.device()
torch.manual_seed(0)
model = nn.Linear(8, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(8):
    loss = model(torch.randn(4, 8).to(device)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
    torch.save(model.state_dict(), "last.pt")
