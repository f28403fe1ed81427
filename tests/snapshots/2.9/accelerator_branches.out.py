"""In the style of today's pytorch/examples ImageNet script: the device is the accelerator
when there is one (torch.accelerator), the CPU otherwise, and the model is moved and
wrapped only under `device.type == 'cuda'` checks; --multiprocessing-distributed starts one
process per device, each with DistributedDataParallel. Training, then validation with
meters. A small model and synthetic images stand in for the real ones.

Without an accelerator it runs on the CPU (one process with the gloo backend, the model
not wrapped, as the original does there)."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group backend)
import torch_xla.runtime as xr

parser = argparse.ArgumentParser(description="ImageNet-style training on synthetic images")
parser.add_argument("--epochs", default=3, type=int)
parser.add_argument("-b", "--batch-size", default=16, type=int)
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--world-size", default=-1, type=int)
parser.add_argument("--rank", default=-1, type=int)
parser.add_argument("--dist-url", default="xla://", type=str)
parser.add_argument("--dist-backend", default="xla", type=str)
parser.add_argument("--gpu", default=None, type=int)
parser.add_argument("--no-accel", action="store_true")
parser.add_argument("--multiprocessing-distributed", action="store_true")


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


def main():
    args = parser.parse_args()
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    use_accel = not args.no_accel
    if use_accel:
        device = torch.device("xla")
    else:
        device = torch.device("cpu")
    if device.type == "cuda":
        ngpus_per_node = torch.accelerator.device_count()
    else:
        ngpus_per_node = 1
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        torch_xla.launch(main_worker, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    use_accel = not args.no_accel
    if use_accel:
        device = torch.device("xla")
    else:
        device = torch.device("cpu")
        args.dist_backend = "xla"
    if args.distributed:
        if args.multiprocessing_distributed:
            args.rank = xr.global_ordinal()
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(8 * 16, 10),
    )
    if not use_accel:
        print("using CPU, this will be slow")
    elif args.distributed:
        if device.type == "xla":
            if args.gpu is not None:
                model.to(torch_xla.device())
                args.batch_size = int(args.batch_size / ngpus_per_node)
                model = torch.nn.parallel.DistributedDataParallel(model)
            else:
                model.to(torch_xla.device())
                model = torch.nn.parallel.DistributedDataParallel(model)
    elif device.type == "xla":
        model = model.to(torch_xla.device())
    else:
        model.to(torch_xla.device())

    criterion = nn.CrossEntropyLoss().to(torch_xla.device())
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)

    g = torch.Generator().manual_seed(0)
    images = torch.randn(128, 3, 8, 8, generator=g)
    targets = torch.randint(0, 10, (128,), generator=g)
    train_dataset = torch.utils.data.TensorDataset(images[:96], targets[:96])
    val_dataset = torch.utils.data.TensorDataset(images[96:], targets[96:])
    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=False, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    else:
        train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=False, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False)

    step = 0
    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        step = train(train_loader, model, criterion, optimizer, device, step)
        validate(val_loader, model, criterion, args)


def train(train_loader, model, criterion, optimizer, device, step):
    model.train()
    for images, target in train_loader:
        images = images.to(torch_xla.device(), non_blocking=True)
        target = target.to(torch_xla.device(), non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        xm.add_step_closure(lambda step, loss: print("step {} loss {:.6e}".format(step, loss.item())), args=(step, loss))
        step += 1
        torch_xla.sync()
    return step


def validate(val_loader, model, criterion, args):
    use_accel = not args.no_accel
    if use_accel:
        device = torch.device("xla")
    else:
        device = torch.device("cpu")
    losses = AverageMeter()
    top1 = AverageMeter()
    model.eval()
    with torch.no_grad():
        for images, target in val_loader:
            if args.gpu is not None and device.type == "xla":
                images = images.to(torch_xla.device(), non_blocking=True)
                target = target.to(torch_xla.device(), non_blocking=True)
            else:
                images = images.to(torch_xla.device())
                target = target.to(torch_xla.device())
            output = model(images)
            losses.update(criterion(output, target).item(), images.size(0))
            top1.update((output.argmax(1) == target).float().mean() * 100, images.size(0))
            torch_xla.sync()
    print("validation loss {:.6f} acc {:.4f}".format(losses.avg, float(top1.avg)))


if __name__ == "__main__":
    main()
