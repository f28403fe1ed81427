"""Regression net trained on a single GPU (2018-style; a GPU is required)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch_xla
import torch_xla.core.xla_model as xm

parser = argparse.ArgumentParser(description='single GPU training')
parser.add_argument('--gpu', default=0, type=int, help='GPU id to use.')
parser.add_argument('--epochs', default=3, type=int)
parser.add_argument('--iters-per-epoch', default=10, type=int)
parser.add_argument('--batch-size', default=32, type=int)
parser.add_argument('--lr', default=0.01, type=float)
parser.add_argument('--seed', default=0, type=int)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(10, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def sanity_checks(device):
    # a few tensors created directly on the GPU
    x = torch.FloatTensor(4, 10).to(torch_xla.device()).normal_()
    noise = torch.randn(3, device="xla")
    z = torch.zeros(2).to("xla")
    w = torch.ones(5, device=device)
    if x.is_cuda:
        print('x lives on', x.device)
    print('noise sum %.4f, zeros sum %.1f, ones sum %.1f' % (noise.sum().item(), z.sum().item(), w.sum().item()))


def main():
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)

    device = torch_xla.device()
    print("Use GPU: {} for training".format(args.gpu))
    sanity_checks(device)

    model = Net().to(torch_xla.device())
    criterion = nn.MSELoss().to(torch_xla.device())
    optimizer = optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    true_w = torch.randn(10, 1)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        end = time.time()
        for i in range(args.iters_per_epoch):
            inputs = torch.randn(args.batch_size, 10)
            target = inputs.mm(true_w) + 0.1 * torch.randn(args.batch_size, 1)
            inputs = inputs.to(torch_xla.device(), non_blocking=True)
            target = target.to(torch_xla.device(), non_blocking=True)

            output = model(inputs)
            loss = criterion(output, target)

            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)

            xm.add_step_closure(lambda step, loss: print('step {} loss {:.6e}'.format(step, loss.item())), args=(step, loss))
            step += 1
            torch_xla.sync()

        batch_time = time.time() - end
        print('Epoch: [{0}]\tTime {1:.3f}'.format(epoch, batch_time))

    # evaluate on a fresh batch
    model.eval()
    with torch.no_grad():
        val_x = torch.randn(64, 10).to(device)
        val_y = val_x.mm(true_w.to(device))
        val_loss = criterion(model(val_x), val_y)
    print('validation loss: %.4f' % val_loss.item())

    xm.save(model, "model_full.pt")


if __name__ == '__main__':
    main()
