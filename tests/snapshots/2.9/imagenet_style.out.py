"""Excerpt in the style of the pytorch/examples ImageNet script: device chosen per
worker, CUDA-only branches, a resumed checkpoint, a train() function.  Snapshot only
(it needs a data set and a GPU)."""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch_xla
import torch_xla.core.xla_model as xm


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    model = build_model()
    if args.gpu is not None:
        model.to(torch_xla.device())
    else:
        model = torch.nn.DataParallel(model).to(torch_xla.device())

    if args.gpu:
        device = torch_xla.device()
    else:
        device = torch_xla.device()
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)

    if args.resume:
        if os.path.isfile(args.resume):
            if args.gpu is None:
                checkpoint = torch.load(args.resume)
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
            xm.add_step_closure(lambda loss: print(loss.item()), args=(loss,))
        torch_xla.sync()
