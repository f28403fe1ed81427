"""Programs and helpers the lazy rules' cases share."""

from __future__ import annotations

from codemods.engine.rule import substituted

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

# NeRF's crop test in its training loop, on Python numbers taken from an array beside the tensors
# (``H, W = int(H), int(W)``): no host read of a device value, for XLA702 and XLA703 alike.
PYTHON_NUMBERS = """
import torch


def train(args, poses, images):
    hwf = poses[0, :3, -1]
    H, W, focal = hwf
    H, W = int(H), int(W)
    poses = torch.Tensor(poses).cuda()
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(100):
        if i < args.precrop_iters:
            dH = int(H // 2 * args.precrop_frac)
            if H // 2 - dH > 0:
                print("cropping", dH)
        loss = model(images[i].cuda()).sum()
        loss.backward()
        optimizer.step()
"""
# How each target ports it: its imports, its device, its barrier after the step.
_PORTS = {
    "2.9": ("import torch_xla\nimport torch_xla.core.xla_model as xm\n", "torch_xla.device()", "torch_xla.sync()"),
    "sagemaker": ("import torch_xla.core.xla_model as xm\n", "xm.xla_device()", "xm.mark_step()"),
}


def python_numbers_ported(target: str) -> str:
    imports, device, barrier = _PORTS[target]
    return substituted(
        PYTHON_NUMBERS,
        ("import torch\n", f"import torch\n{imports}"),
        (".cuda()", f".to({device})"),
        ("        optimizer.step()\n", f"        xm.optimizer_step(optimizer)\n        {barrier}\n"),
    )


def _loop(body: str) -> str:
    return _LOOP.format(body="".join(f"    {line}\n" for line in body.splitlines()))
