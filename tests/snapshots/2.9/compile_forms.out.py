"""
torch.compile the way speedrun-style scripts use it: inductor settings, a compiled
optimizer helper, a compiled module method, autotuned modes and inductor options.
"""
import torch
import torch._dynamo
import torch._inductor.config as config
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

config.coordinate_descent_tuning = True  # we have banned this flag for new records
torch._dynamo.config.cache_size_limit = 64


@torch.compile(backend="openxla")
def zeropower_via_newtonschulz5(G, steps=5):
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G / (G.norm() + 1e-7)
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X


@torch.compile(fullgraph=True, backend="openxla")
def rms_norm(x):
    return F.rms_norm(x, (x.size(-1),))


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.proj(F.relu(self.fc(rms_norm(x))).square())


model = MLP(64).to(torch_xla.device())
model.compile(backend="openxla")
head = torch.compile(nn.Linear(64, 10).to(torch_xla.device()), dynamic=False, backend="openxla")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(10):
    x = torch.randn(8, 64, device="xla")
    loss = head(model(x)).square().mean()
    loss.backward()
    for p in model.parameters():
        if p.grad is not None and p.ndim == 2:
            p.grad.copy_(zeropower_via_newtonschulz5(p.grad))
    xm.optimizer_step(optimizer)
    optimizer.zero_grad(set_to_none=True)
    torch_xla.sync()
