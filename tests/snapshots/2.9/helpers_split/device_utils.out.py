"""Small helpers shared by the training scripts in this folder."""
import os
import random

import torch
import torch_xla
import torch_xla.core.xla_model as xm


def get_device():
    """Returns the best available device."""
    return torch_xla.device()


def set_seed(seed):
    """Seeds python and torch RNGs so runs are repeatable."""
    random.seed(seed)
    torch.manual_seed(seed)


def save_checkpoint(model, path):
    """Saves only the weights of ``model`` to ``path``."""
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    xm.save(model.state_dict(), path)


def load_checkpoint(model, path, device=None):
    """Loads weights saved by :func:`save_checkpoint` into ``model``."""
    state = torch.load(path, map_location=device or get_device())
    model.load_state_dict(state)
    return model


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class AverageMeter(object):
    """Keeps a running average of a scalar, e.g. the loss over an epoch."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)

    def __str__(self):
        return '%s %.4f' % (self.name, self.avg)
