"""Small programs that tests of several concerns write: a seeded training loop of an
``nn.Linear`` (its steps, or a whole script that logs its loss with a given statement), each
printing ``step N loss V`` for the executed tests' comparison with the eager run; torchvision's
references' ``init_distributed_mode`` helper; MiniGPT-4's batch move under a device check;
BasicSR's model registry.  A static test and an executed test of one shape share its program
here, so that the run shows what the findings say of that very program."""

from __future__ import annotations


def linear_steps(steps: int, optimizer: str = "torch.optim.SGD", *, then: str = "") -> str:
    """The training steps of a function body (4 spaces in) that has chosen its ``device``: a
    seeded ``nn.Linear(4, 2)`` fitted to random targets for ``steps`` steps by ``optimizer``
    (built over its parameters, lr 0.1), printing each step's loss.  ``then``: statements (4 spaces
    in) run once the model is on its device, before its optimizer is built (a load of its weights)."""
    return f"""\
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
{then}    optimizer = {optimizer}(model.parameters(), lr=0.1)
    for step in range({steps}):
        x, y = torch.randn(8, 4), torch.randn(8, 2)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")
"""


def batches_loop(move: str, forward: str = "model(x)") -> str:
    """The end of a script whose ``main`` has made its ``batches`` (pairs of random 8x4 inputs and
    8x2 targets), its model and its ``optimizer``: a step per batch, the batch moved by ``move``
    (statements 8 spaces in), the mean squared error of ``forward`` to the targets, each step's
    loss printed; then the main guard."""
    return f"""\
    for step, (x, y) in enumerate(batches):
{move}        loss = nn.functional.mse_loss({forward}, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {{step}} loss {{loss.item()}}")


if __name__ == "__main__":
    main()
"""


# The model and optimizer of ``training_script`` unless a test gives its own.
LINEAR_SETUP = "    model = nn.Linear(4, 2).to(device)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
PRINTED_LOSS = 'print(f"step {step} loss {loss.item()}")'


def training_script(
    steps: int, *, setup: str = LINEAR_SETUP, log: str = PRINTED_LOSS, classes: str = "", batch: int = 8
) -> str:
    """A seeded script whose ``main`` builds ``model`` and its ``optimizer`` on its ``device`` with
    ``setup`` (4 spaces in), then trains it for ``steps`` steps on random batches of ``batch`` rows,
    each step ending with the statement ``log`` (8 spaces in; by default it prints ``step N loss V``).
    ``classes``: module-level code it defines first (the class of its model)."""
    defined = f"{classes}\n\n" if classes else ""
    return f"""\
import torch
import torch.nn as nn


{defined}def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{setup}    for step in range({steps}):
        x = torch.randn({batch}, 4)
        loss = model(x.to(device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {log}


if __name__ == "__main__":
    main()
"""


def logged_loss_loop(log: str, steps: int) -> str:
    """A script whose training loop of ``steps`` steps ends each step with the statement ``log``
    (8 spaces in), which prints ``step N loss V`` from ``step`` and ``loss``."""
    return training_script(steps, log=log)


# torchvision's references' helper (copied into many scripts): it starts the process group only
# when a launcher's variables are set, and returns with ``args.distributed = False`` otherwise.
INIT_DISTRIBUTED_MODE = """\
import os

import torch


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        args.distributed = False
        return
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
"""


# MiniGPT-4's shape: a data helper that moves a batch only if it is handed ``cuda_enabled=True``,
# and a runner that hands it a device type check (``self.device.type == "cuda"``: False on an XLA
# host) and prints each step's loss.
MINIGPT_DATA = """\
import torch


def move_to_cuda(samples):
    def _move(tensor):
        return tensor.cuda()

    return {key: _move(value) for key, value in samples.items()}


def prepare_sample(samples, cuda_enabled=True):
    if cuda_enabled:
        samples = move_to_cuda(samples)
    return samples
"""

MINIGPT_RUNNER = """\
import torch

from data import prepare_sample


class Runner:
    def __init__(self, model, device):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    @property
    def cuda_enabled(self):
        return self.device.type == "cuda"

    def train_epoch(self, loader):
        for step, samples in enumerate(loader):
            samples = prepare_sample(samples, cuda_enabled=self.cuda_enabled)
            self.optimizer.zero_grad()
            loss = ((self.model(samples["x"]) - samples["y"]) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            print(f"step {step} loss {loss.item():.6f}")
"""


# A registry of classes by name (BasicSR's shape), and a models package that fills it by a folder
# scan of its ``*_model.py`` modules and builds a model by its registered name.
REGISTRY = """\
class Registry:
    def __init__(self):
        self.classes = {}

    def register(self, cls):
        self.classes[cls.__name__] = cls
        return cls

    def get(self, name):
        return self.classes[name]


MODELS = Registry()
"""

REGISTRY_MODELS_INIT = """\
import importlib
import os

from registry import MODELS

for file_name in sorted(os.listdir(os.path.dirname(os.path.abspath(__file__)))):
    if file_name.endswith("_model.py"):
        importlib.import_module("models." + file_name[:-3])


def build_model(opt):
    return MODELS.get(opt["type"])(opt)
"""
