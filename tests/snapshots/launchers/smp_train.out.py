"""A PyTorch training script for SageMaker model parallel: each process pins its GPU."""
import torch
import torch.nn as nn
import smdistributed.modelparallel.torch as smp

smp.init()
torch.cuda.set_device(smp.local_rank())
device = torch.device("cuda")

model = smp.DistributedModel(nn.Linear(32, 2))
optimizer = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-3))


@smp.step
def train_step(model, data, target):
    loss = nn.functional.cross_entropy(model(data), target)
    model.backward(loss)
    return loss


for step in range(10):
    data = torch.randn(8, 32, device=device)
    target = torch.randint(0, 2, (8,), device=device)
    optimizer.zero_grad()
    losses = train_step(model, data, target)
    optimizer.step()
    if smp.rank() == 0:
        print(f"step {step} loss {losses.reduce_mean().item()}")
