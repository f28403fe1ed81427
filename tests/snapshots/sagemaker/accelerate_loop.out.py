"""A training loop written for Hugging Face Accelerate: prepare() places the model and
wraps the optimizer and loader; accelerator.backward replaces loss.backward."""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator()
torch.manual_seed(8)

x = torch.randn(128, 6)
y = x.sum(1, keepdim=True)
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, drop_last=True)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

for step, (inputs, targets) in enumerate(loader):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    accelerator.backward(loss)
    optimizer.step()
    accelerator.print(f"step {step} loss {loss.item():.6f}")
