"""Programs and helpers the lazy rules' cases share."""

from __future__ import annotations

_LOOP = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 4).to(device)
    loss = model(x).pow(2).mean()
    loss.backward()
    xm.optimizer_step(optimizer)
{body}    torch_xla.sync()
"""


# A training step whose inner loop over a constant range builds the loss the step backpropagates
# (reading its top-k hits on the host): XLA704 and XLA712 leave it alone; their near variants flag it.
STEP_WITH_INNER_LOSS_LOOP = """
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = torch_xla.device()
model = torch.nn.Linear(4, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 4).to(device)
    out = model(x)
    loss = out.pow(2).mean()
    for k in range(1, 3):
        _, top = out.topk(k, dim=1)
        loss = loss + out.gather(1, top).mean()
        hits.append(top.sum().item())
    loss.backward()
    xm.optimizer_step(optimizer)
    torch_xla.sync()
"""


def _loop(body: str) -> str:
    return _LOOP.format(body="".join(f"    {line}\n" for line in body.splitlines()))
