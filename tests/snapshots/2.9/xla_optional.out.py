"""Trains a small MLP on a TPU when torch_xla is available, otherwise on GPU or CPU.

The same loop works on all three back ends; the only XLA-specific pieces are
the device lookup and the ``mark_step`` call that cuts the lazy graph.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    HAS_XLA = True
except ImportError:
    HAS_XLA = False

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=12)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--lr', type=float, default=0.1)
args = parser.parse_args()

torch.manual_seed(21)

if HAS_XLA:
    device = xm.xla_device()
else:
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


class MLP(nn.Module):
    def __init__(self, d_in=10, d_hidden=32, d_out=4):
        super().__init__()
        self.l1 = nn.Linear(d_in, d_hidden)
        self.l2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def batches(n_batches, batch_size, seed=99):
    """Yields freshly sampled (x, y) pairs on the host."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        x = torch.randn(batch_size, 10, generator=gen)
        y = x[:, :4].abs().argmax(dim=1)
        yield x, y


model = MLP().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

for step, (x, y) in enumerate(batches(args.steps, args.batch_size)):
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    if HAS_XLA:
        xm.mark_step()
    print(f'step {step} loss {loss.item():.6e}')

# quick held-out check
model.eval()
correct = 0
total = 0
with torch.no_grad():
    for x, y in batches(4, args.batch_size, seed=123):
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(dim=1) == y).sum().item()
        total += y.numel()
print('held-out accuracy: %.3f' % (correct / total))

model.cpu()
torch.save(model.state_dict(), 'xla_optional.pt')
