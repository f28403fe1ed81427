"""Regression with missing targets (marked -1): the loss uses only the observed ones,
selected with a boolean mask, so each batch's selection has its own size."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

torch.manual_seed(7)
device = xm.xla_device()

features = torch.randn(400, 6)
values = features @ torch.randn(6, 3)
values[torch.rand(400, 3) < 0.3] = -1.0  # missing

model = nn.Linear(6, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(20):
    start = (step * 20) % 400
    x = features[start:start + 20].to(device)
    y = values[start:start + 20].to(device)
    optimizer.zero_grad()
    pred = model(x)
    observed = y >= 0
    loss = F.mse_loss(pred[observed], y[observed])
    loss.backward()
    xm.optimizer_step(optimizer)
    xm.add_step_closure(lambda step, loss: print(f"step {step} loss {loss.item():.6f}"), args=(step, loss))
    xm.mark_step()
