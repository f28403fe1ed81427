"""A learning-rate schedule: it takes the optimizer but runs no training step."""
import math


def adjust_learning_rate(optimizer, progress, base_lr, warmup=0.2):
    if progress < warmup:
        lr = base_lr * progress / warmup
    else:
        lr = base_lr * 0.5 * (1.0 + math.cos(math.pi * (progress - warmup) / (1.0 - warmup)))
    for group in optimizer.param_groups:
        group["lr"] = lr
    return lr
