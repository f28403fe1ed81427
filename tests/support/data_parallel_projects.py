"""A project that wraps its model in a DataParallel subclass of another module, with its own
`scatter`, and feeds it batches from an iterator that puts the whole stream on the device it
is handed (the fifth held-out list's shape; `{handed}`: that device, or nothing): tests/distributed
converts it (XLA118 or not) and runs it on XLA.  Both programs here are seeded and print
``step N loss V`` at each step, for the executed tests' comparison with the eager run."""

UNEVEN_PARALLEL = """\
import torch.nn as nn


class UnevenDataParallel(nn.DataParallel):
    def __init__(self, first_chunk, *args, **kwargs):
        self.first_chunk = first_chunk
        super().__init__(*args, **kwargs)

    def scatter(self, inputs, kwargs, device_ids):
        return super().scatter(inputs, kwargs, device_ids)
"""

ORDERED_DATA = """\
import torch


class OrderedIterator:
    def __init__(self, data, bsz, device="cpu"):
        self.data = data.view(bsz, -1).t().contiguous().to(device)

    def __iter__(self):
        for i in range(0, self.data.size(0) - 5, 4):
            yield self.data[i:i + 4], self.data[i + 1:i + 5]
"""

UNEVEN_TRAIN = """\
import torch
import torch.nn as nn

from data import OrderedIterator
from parallel import UnevenDataParallel

device = torch.device("cuda")
torch.manual_seed(0)
model = nn.Embedding(100, 100).to(device)
para_model = UnevenDataParallel(2, model, dim=1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step, (data, target) in enumerate(OrderedIterator(torch.randint(0, 100, (800,)), 8{handed})):
    loss = nn.functional.cross_entropy(para_model(data).view(-1, 100), target.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {{step}} loss {{loss.item()}}")
print(f"trained on {{next(model.parameters()).device.type}}")
"""

# A trainer class that keeps its model wrapped on an attribute, and a driver of another module
# that reads the wrapped model off it (`{read}`: `trainer.model.module`, or a `getattr` that
# works either way).
DP_TRAINER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, net):
        self.model = nn.DataParallel(net).cuda()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def fit(self, x, y):
        loss = ((self.model(x.cuda()) - y.cuda()) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()
"""

DP_TRAINER_MAIN = """\
import torch
import torch.nn as nn
from trainer import Trainer

torch.manual_seed(0)
trainer = Trainer(nn.Linear(4, 4))
for step in range(10):
    loss = trainer.fit(torch.randn(8, 4), torch.randn(8, 4))
    print(f"step {{step}} loss {{loss}}")
net = {read}
torch.save(net.state_dict(), "model.pt")
print(f"saved on {{next(net.parameters()).device.type}}, loss {{loss:.3f}}")
"""
