"""The training rules' longer case programs: XLA203's longest, each beside its conversion
(``_PORTED``); their sagemaker variants are derived by the tests (tests/support/derived_cases.py)."""

from __future__ import annotations

VISION_LANGUAGE = """
import torch
from torch import nn


class VisionLanguage(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Linear(8, 4)
        self.head = nn.Linear(4, 2)


model = VisionLanguage()
optimizer = torch.optim.AdamW([*model.vision.parameters(), *model.head.parameters()], lr=1e-3)
model.cuda()
"""


VISION_LANGUAGE_PORTED = """
import torch
from torch import nn
import torch_xla


class VisionLanguage(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Linear(8, 4)
        self.head = nn.Linear(4, 2)


model = VisionLanguage()
optimizer = torch.optim.AdamW([*model.vision.to(torch_xla.device()).parameters(), *model.head.to(torch_xla.device()).parameters()], lr=1e-3)
model.to(torch_xla.device())
"""


KEYWORD_MODEL_TO_A_HANDED_DEVICE = """
import torch


class SimCLR:
    def __init__(self, *args, **kwargs):
        self.args = kwargs["args"]
        self.model = kwargs["model"].to(self.args.device)
        self.optimizer = kwargs["optimizer"]


def main(args):
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.Adam(model.parameters(), 3e-4)
    return SimCLR(model=model, optimizer=optimizer, args=args)
"""


LATER_MOVE_BY_ANOTHER_METHOD = """
import torch


class Trainer:
    def __init__(self, model, lr):
        self.device = torch.device("cuda")
        self.model = model
        self.optimizer = torch.optim.Adam([*self.model.encoder.parameters(), *self.model.decoder.parameters()], lr=lr)

    def train(self, loader):
        self.model.to(self.device)
"""


LATER_MOVE_BY_ANOTHER_METHOD_PORTED = """
import torch
import torch_xla


class Trainer:
    def __init__(self, model, lr):
        self.device = torch_xla.device()
        self.model = model
        self.optimizer = torch.optim.Adam([*self.model.encoder.to(torch_xla.device()).parameters(), *self.model.decoder.to(torch_xla.device()).parameters()], lr=lr)

    def train(self, loader):
        self.model.to(self.device)
"""


HANDED_IN_MODELS = """
import torch


class Trainer:
    def __init__(self, model, lr):
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)


def fit(model, lr):
    return torch.optim.SGD([{"params": model.backbone.parameters(), "lr": lr}])


class SimCLR:
    def __init__(self, **kwargs):
        self.model = kwargs["model"].cuda()


def main():
    model = torch.nn.Linear(8, 4)
    simclr = SimCLR(model=model)
    optimizer = torch.optim.Adam(simclr.model.parameters(), 3e-4)
"""


HANDED_IN_MODELS_PORTED = """
import torch
import torch_xla


class Trainer:
    def __init__(self, model, lr):
        self.model = model.to(torch_xla.device())
        self.optimizer = torch.optim.AdamW([*self.model.vision.parameters(), *self.model.head.parameters()], lr=lr)


def fit(model, lr):
    return torch.optim.SGD([{"params": model.backbone.parameters(), "lr": lr}])


class SimCLR:
    def __init__(self, **kwargs):
        self.model = kwargs["model"].to(torch_xla.device())


def main():
    model = torch.nn.Linear(8, 4)
    simclr = SimCLR(model=model)
    optimizer = torch.optim.Adam(simclr.model.parameters(), 3e-4)
"""


OPTIMIZER_BUILDER_AND_TRAINER = """
import torch

class Net(torch.nn.Module):
    pass

class Trainer:
    def __init__(self, model, optimizer, device):
        self.model = model.to(device)

def make_optimizer(net, lr):
    return torch.optim.AdamW(net.parameters(), lr=lr)

def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Net()
    optimizer = make_optimizer(model, 0.1)
    Trainer(model, optimizer, device=device)
"""


OPTIMIZER_BUILDER_AND_TRAINER_PORTED = """
import torch
import torch_xla

class Net(torch.nn.Module):
    pass

class Trainer:
    def __init__(self, model, optimizer, device):
        self.model = model.to(device)

def make_optimizer(net, lr):
    return torch.optim.AdamW(net.parameters(), lr=lr)

def main():
    device = "xla"
    model = Net()
    optimizer = make_optimizer(model.to(torch_xla.device()), 0.1)
    Trainer(model, optimizer, device=device)
"""


MOVED_BY_A_METHOD = """
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self):
        self.model.cuda()


def main():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    Trainer(model, optimizer).fit()
"""


MOVED_BY_A_METHOD_PORTED = """
import torch
import torch_xla


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self):
        self.model.to(torch_xla.device())


def main():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), lr=1e-3)
    Trainer(model, optimizer).fit()
"""


MOVED_BY_A_METHOD_ALIASED = """
from torch import nn, optim


class Trainer:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def fit(self):
        self.net.cuda()


def main():
    net = nn.Linear(4, 2)
    opt = optim.Adam(net.parameters(), lr=1e-3)
    Trainer(net, opt).fit()
"""


MOVED_BY_A_METHOD_ALIASED_PORTED = """
from torch import nn, optim
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def fit(self):
        self.net.to(xm.xla_device())


def main():
    net = nn.Linear(4, 2)
    opt = optim.Adam(net.to(xm.xla_device()).parameters(), lr=1e-3)
    Trainer(net, opt).fit()
"""


PARAMETERS_TO_OPTIMIZER_BUILDERS = """
import torch
import timm.optim


def get_optimizer(params, lr):
    return torch.optim.SGD(params, lr=lr)


def main():
    model = torch.nn.Linear(4, 2)
    optimizer = get_optimizer(model.parameters(), 0.1)
    head = torch.nn.Linear(2, 2)
    head_optimizer = timm.optim.create_optimizer_v2(head.named_parameters(), "adamw", lr=1e-3)
    model.cuda()
    head.cuda()
"""


PARAMETERS_TO_OPTIMIZER_BUILDERS_PORTED = """
import torch
import torch_xla.core.xla_model as xm
import timm.optim


def get_optimizer(params, lr):
    return torch.optim.SGD(params, lr=lr)


def main():
    model = torch.nn.Linear(4, 2)
    optimizer = get_optimizer(model.to(xm.xla_device()).parameters(), 0.1)
    head = torch.nn.Linear(2, 2)
    head_optimizer = timm.optim.create_optimizer_v2(head.to(xm.xla_device()).named_parameters(), "adamw", lr=1e-3)
    model.to(xm.xla_device())
    head.to(xm.xla_device())
"""


MOVED_IN_INIT = """
import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.model.cuda()

    def configure(self):
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def restart(self):
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.model.to(torch.float16)
"""


MOVED_IN_INIT_PORTED = """
import torch
import torch_xla


class Trainer:
    def __init__(self, model):
        self.model = model
        self.model.to(torch_xla.device())

    def configure(self):
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def restart(self):
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.model.to(torch.float16)
"""


KEYWORD_MODEL_TO_A_KNOWN_DEVICE = """
import torch


class SimCLR:
    def __init__(self, *args, **kwargs):
        self.args = kwargs["args"]
        self.model = kwargs["model"].to(self.args.device)


def main(args):
    args.device = torch.device("cuda")
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.Adam(model.parameters(), 3e-4)
    return SimCLR(model=model, optimizer=optimizer, args=args)
"""


KEYWORD_MODEL_TO_A_KNOWN_DEVICE_PORTED = """
import torch
import torch_xla


class SimCLR:
    def __init__(self, *args, **kwargs):
        self.args = kwargs["args"]
        self.model = kwargs["model"].to(self.args.device)


def main(args):
    args.device = torch_xla.device()
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), 3e-4)
    return SimCLR(model=model, optimizer=optimizer, args=args)
"""


KEYWORD_MODEL_TO_CUDA = """
import torch


class Learner:
    def __init__(self, **kwargs):
        self.model = kwargs.pop("model").cuda()
        self.optimizer = kwargs.pop("optimizer")


def main():
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.Adam(model.parameters(), 3e-4)
    return Learner(model=model, optimizer=optimizer)
"""


KEYWORD_MODEL_TO_CUDA_PORTED = """
import torch
import torch_xla


class Learner:
    def __init__(self, **kwargs):
        self.model = kwargs.pop("model").to(torch_xla.device())
        self.optimizer = kwargs.pop("optimizer")


def main():
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.Adam(model.to(torch_xla.device()).parameters(), 3e-4)
    return Learner(model=model, optimizer=optimizer)
"""
