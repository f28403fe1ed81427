"""A project that wraps its model in a DataParallel subclass of another module, with its own
`scatter`, and feeds it batches from an iterator that puts the whole stream on the device it
is handed (the fifth held-out list's shape; `{handed}`: that device, or nothing): tests/distributed
converts it (XLA118 or not) and runs it on XLA."""

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
model = nn.Embedding(100, 100).to(device)
para_model = UnevenDataParallel(2, model, dim=1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for data, target in OrderedIterator(torch.randint(0, 100, (4000,)), 8{handed}):
    loss = nn.functional.cross_entropy(para_model(data).view(-1, 100), target.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"trained on {{next(model.parameters()).device.type}}")
"""
