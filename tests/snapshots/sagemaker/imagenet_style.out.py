"""In the style of the pytorch/examples ImageNet script: device chosen per worker,
CUDA-only branches, a resumed checkpoint, a train() function; a small model and a
synthetic data set stand in for the real ones."""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch_xla.core.xla_model as xm


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    model = build_model()
    if args.gpu is not None:
        model.to(xm.xla_device())
    else:
        model = model.to(xm.xla_device())

    if args.gpu:
        device = xm.xla_device()
    else:
        device = xm.xla_device()
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)

    if args.resume:
        if os.path.isfile(args.resume):
            if args.gpu is None:
                checkpoint = torch.load(args.resume, map_location="cpu")
            else:
                loc = 'cuda:{}'.format(args.gpu)
                checkpoint = torch.load(args.resume, map_location="cpu")
            model.load_state_dict(checkpoint['state_dict'])
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, device, args)


def train(train_loader, model, criterion, optimizer, epoch, device, args):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        xm.optimizer_step(optimizer)
        if i % args.print_freq == 0:
            xm.add_step_closure(lambda value, loss: print('step {} loss {:.6e}'.format(value, loss.item())), args=(epoch * len(train_loader) + i, loss))
        xm.mark_step()


def build_model():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10),
    )


parser = argparse.ArgumentParser(description='ImageNet-style training on synthetic images')
parser.add_argument('--gpu', default=None, type=int, help='GPU id to use.')
parser.add_argument('--lr', default=0.1, type=float)
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--epochs', default=3, type=int)
parser.add_argument('--start-epoch', default=0, type=int)
parser.add_argument('--print-freq', default=1, type=int)
parser.add_argument('--resume', default='', type=str, help='path to a checkpoint')

torch.manual_seed(0)
images = torch.randn(64, 3, 16, 16)
labels = (images.mean(dim=(1, 2, 3)) > 0).long()
train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(images, labels), batch_size=16, shuffle=True)

if __name__ == '__main__':
    main_worker(None, 1, parser.parse_args())
