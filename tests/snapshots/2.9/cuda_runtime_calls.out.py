"""Throughput benchmark for a small CNN training step.

Measures wall-clock time per epoch and reports images/sec. CUDA-specific
runtime calls (synchronize, memory stats, cache release) are used the way a
typical benchmarking script uses them.
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

parser = argparse.ArgumentParser(description='training step benchmark')
parser.add_argument('--epochs', type=int, default=2)
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--num-samples', type=int, default=80)
parser.add_argument('--lr', type=float, default=0.05)
parser.add_argument('--report-throughput', action='store_true', default=False,
                    help='print images/sec for each epoch (timings vary run to run)')
args = parser.parse_args()

torch.manual_seed(0)
device = torch_xla.device()


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


dataset = TensorDataset(torch.randn(args.num_samples, 3, 16, 16),
                        torch.randint(0, 10, (args.num_samples,)))
loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                    num_workers=0)

model = SmallCNN().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

global_step = 0
for epoch in range(args.epochs):
    model.train()
    xm.wait_device_ops()
    start = time.time()
    seen = 0

    for images, labels in pl.MpDeviceLoader(loader, device):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        try:
            optimizer.zero_grad(set_to_none=True)
            output = model(images)
            loss = criterion(output, labels)
            loss.backward()
            xm.optimizer_step(optimizer)
        except torch.cuda.OutOfMemoryError:
            print('OOM at batch size %d, skipping batch' % images.size(0))
            optimizer.zero_grad(set_to_none=True)
            continue

        seen += images.size(0)
        xm.add_step_closure(lambda global_step, loss: print('step %d loss %.6e' % (global_step, loss.item())), args=(global_step, loss))
        global_step += 1

    xm.wait_device_ops()
    elapsed = time.time() - start
    if args.report_throughput:
        print('epoch %d: %.1f images/sec' % (epoch, seen / elapsed))
    print('epoch %d: %d images processed' % (epoch, seen))

    if torch.cuda.is_available():
        print('memory allocated: %.1f MB' % (torch.cuda.memory_allocated() / 1024 ** 2))
