"""Reduced from the pytorch/examples ImageNet script: --multiprocessing-distributed
spawns one worker per GPU (ngpus_per_node), each worker computes its global rank,
splits the batch size between the GPUs of its node, and wraps the model in DDP (or
DataParallel without --multiprocessing-distributed); a random data set stands in for
ImageNet.

    python dist_imagenet.py --multiprocessing-distributed --world-size 1 --rank 0

Without CUDA it runs one worker on the CPU with the gloo backend.
"""
import argparse
import os
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.distributed.xla_multiprocessing as xmp

parser = argparse.ArgumentParser(description="PyTorch ImageNet-style training")
parser.add_argument("--epochs", default=2, type=int, metavar="N", help="number of total epochs to run")
parser.add_argument("-b", "--batch-size", default=32, type=int, metavar="N",
                    help="mini-batch size; this is the total batch size of all GPUs on the current node")
parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, metavar="LR", dest="lr")
parser.add_argument("--momentum", default=0.9, type=float, metavar="M")
parser.add_argument("--world-size", default=-1, type=int, help="number of nodes for distributed training")
parser.add_argument("--rank", default=-1, type=int, help="node rank for distributed training")
parser.add_argument("--dist-url", default="xla://", type=str, help="url used to set up distributed training")
parser.add_argument("--dist-backend", default="xla", type=str, help="distributed backend")
parser.add_argument("--gpu", default=None, type=int, help="GPU id to use.")
parser.add_argument("--multiprocessing-distributed", action="store_true",
                    help="Use multi-processing distributed training to launch N processes per node, "
                    "which has N GPUs.")


def main():
    args = parser.parse_args()

    if args.gpu is not None:
        warnings.warn("You have chosen a specific GPU. This will completely disable data parallelism.")

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed

    if torch.cuda.is_available():
        ngpus_per_node = torch.cuda.device_count()
    else:
        ngpus_per_node = 1
        args.dist_backend = "xla"
    if args.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        args.world_size = ngpus_per_node * args.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        xmp.spawn(main_worker, args=(ngpus_per_node, args))
    else:
        # Simply call main_worker function
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    ngpus_per_node = xm.xrt_world_size()
    args.gpu = gpu

    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = xm.get_ordinal()
        if args.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            args.rank = xm.get_ordinal()
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(8 * 16, 10),
    )

    if args.distributed:
        if args.gpu is not None:
            model.to(xm.xla_device())
            # When using a single GPU per process and per DistributedDataParallel,
            # we need to divide the batch size ourselves based on the total number
            # of GPUs of the current node.
            args.batch_size = int(args.batch_size / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model)
        else:
            model.to(xm.xla_device())
            model = torch.nn.parallel.DistributedDataParallel(model)
        device = xm.xla_device()
    else:
        model = model.to(xm.xla_device())
        device = xm.xla_device()

    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)

    images = torch.randn(512, 3, 16, 16)
    targets = torch.randint(0, 10, (512,))
    train_dataset = torch.utils.data.TensorDataset(images, targets)
    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())
    else:
        train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        sampler=train_sampler, drop_last=True)

    step = 0
    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        model.train()
        for i, (images, target) in enumerate(train_loader):
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            xm.add_step_closure(lambda step, loss: print("step {} loss {:.6e}".format(step, loss.item())), args=(step, loss))
            step += 1
            xm.mark_step()

        if not args.multiprocessing_distributed or (args.multiprocessing_distributed
                and args.rank % ngpus_per_node == 0):
            torch.save({"epoch": epoch + 1, "state_dict": model.state_dict()}, "checkpoint.pth.tar")


if __name__ == "__main__":
    main()
