"""Code already ported to torch_xla by hand: device loader, xm.optimizer_step and a
step barrier are in place, but the loop still syncs with the host and recompiles.
``xla-codemod lint`` names each of those lines."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

device = torch_xla.device()
torch.manual_seed(10)

series = torch.randn(2000)
dataset = TensorDataset(torch.randn(256, 8), torch.randint(0, 3, (256,)))
loader = DataLoader(dataset, batch_size=32, shuffle=True)
model = nn.Linear(8, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

best = float("inf")
total = 0.0
for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
    window = series[step * 8:step * 8 + 8].to(device)
    logits = model(x + window)
    loss = nn.functional.cross_entropy(logits, y)
    confident = logits[logits.softmax(-1).max(-1).values > 0.5]
    optimizer.zero_grad()
    loss.backward()
    xm.optimizer_step(optimizer)
    total += loss.item()
    if loss < best:
        best = loss
    xm.add_step_closure(lambda step, loss, value: print(f"step {step} loss {loss.item():.6f} confident {value}"), args=(step, loss, confident.shape[0]))
